// StreamRegistry: "app/stream" -> the live hub of that name and who publishes to it.
// A hub exists while it has a publisher or players; the last one out removes it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "config/config.hpp"
#include "media/stream_hub.hpp"

namespace sluice::server {

class Connection;

// Live stream names become registry keys and log fields (RTMP and HTTP-FLV alike): refuse what no
// encoder sends.
bool valid_stream_name(std::string_view name);
// The hub settings a live app asks for.
media::StreamHub::Options hub_options(const config::AppConfig& app);

class StreamRegistry {
 public:
  struct Entry {
    std::unique_ptr<media::StreamHub> hub;
    Connection* publisher = nullptr;  // nullptr while nobody publishes
  };

  media::StreamHub* find(const std::string& key);
  media::StreamHub& get_or_create(const std::string& key, const media::StreamHub::Options& options);
  // Claims the name for a publisher; false if someone else already publishes it.
  bool claim_publisher(const std::string& key, Connection* publisher, const media::StreamHub::Options& options);
  void release_publisher(const std::string& key, Connection* publisher);
  // Removes the hub when nobody publishes or plays it any more.
  void remove_if_unused(const std::string& key);
  size_t size() const { return entries_.size(); }
  const std::unordered_map<std::string, Entry>& entries() const { return entries_; }

 private:
  std::unordered_map<std::string, Entry> entries_;
};

}  // namespace sluice::server
