// HttpShared: what the HTTP sides of the worker loops share (every loop accepts and serves HTTP,
// docs/http.md "HTTP on every loop"). One per process, owned by main.cpp beside the WorkerMesh; a
// Server made alone (tests, one loop) has its own. Everything here is behind a mutex or atomic:
// it is touched once per connection, request, upload or HLS admission, never per byte.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_set>

#include "server/http/hls_sessions.hpp"
#include "server/http/shared_file_cache.hpp"

namespace sluice::server {

// One upload at a time per target file, whichever loop receives it.
class UploadClaims {
 public:
  // False when another upload of path is in progress (409).
  bool claim(const std::string& path) {
    std::lock_guard lock(mutex_);
    return claimed_.insert(path).second;
  }
  void release(const std::string& path) {
    std::lock_guard lock(mutex_);
    claimed_.erase(path);
  }

 private:
  std::mutex mutex_;
  std::unordered_set<std::string> claimed_;
};

struct HttpShared {
  HlsSessions hls_sessions;
  UploadClaims uploads;
  // Small downloadable files in memory, one cache for all loops (they agree on every file).
  SharedFileCache files;
  // HTTP connections open on every loop (rtmp.max_connections counts them with the RTMP ones).
  std::atomic<size_t> connections{0};
};

}  // namespace sluice::server
