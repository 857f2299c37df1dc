#include "server/stream_registry.hpp"

namespace sluice::server {

media::StreamHub* StreamRegistry::find(const std::string& key) {
  auto it = entries_.find(key);
  return it == entries_.end() ? nullptr : it->second.hub.get();
}

media::StreamHub& StreamRegistry::get_or_create(const std::string& key, const media::StreamHub::Options& options) {
  Entry& e = entries_[key];
  if (!e.hub) e.hub = std::make_unique<media::StreamHub>(key, options);
  return *e.hub;
}

bool StreamRegistry::claim_publisher(const std::string& key, Connection* publisher,
                                     const media::StreamHub::Options& options) {
  get_or_create(key, options);
  Entry& e = entries_[key];
  if (e.publisher) return false;
  e.publisher = publisher;
  return true;
}

void StreamRegistry::release_publisher(const std::string& key, Connection* publisher) {
  auto it = entries_.find(key);
  if (it == entries_.end() || it->second.publisher != publisher) return;
  it->second.publisher = nullptr;
  remove_if_unused(key);
}

void StreamRegistry::remove_if_unused(const std::string& key) {
  auto it = entries_.find(key);
  if (it == entries_.end()) return;
  if (it->second.publisher || it->second.hub->subscriber_count() > 0) return;
  entries_.erase(it);
}

}  // namespace sluice::server
