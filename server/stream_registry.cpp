#include "server/stream_registry.hpp"

#include <algorithm>

namespace sluice::server {

bool valid_stream_name(std::string_view name) {
  if (name.empty() || name.size() > 256) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return static_cast<unsigned char>(c) >= 0x21 && c != 0x7F && c != '"' && c != '\\';
  });
}

media::StreamHub::Options hub_options(const config::AppConfig& app) {
  media::StreamHub::Options o;
  o.gop_cache = app.gop_cache;
  o.gop_max_frames = app.gop_cache_max_frames;
  o.gop_max_bytes = app.gop_cache_max_bytes;
  return o;
}

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
