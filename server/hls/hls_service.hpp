// HlsService: the HLS side of one worker loop. Runs the muxers started here (hls_muxer.hpp),
// finds the others through the HlsDirectory, and holds the requests that wait for a part or a
// segment (blocking playlist reload, preload hints) until the muxer publishes it.
//
// Lifecycle of a muxer (docs/hls.md):
//  1. With on_demand (the default), the first request for a live stream starts its muxer on the
//     loop that received it; requests on other loops use that one. Without on_demand, the
//     stream's publish starts it on the publisher's loop.
//  2. Nobody asking for idle_close stops it (on_demand), as does the stream ending for good
//     (nobody publishing for idle_close).
//  3. Each new part wakes the waiters: this loop's at once, other loops' through a mesh event
//     (only loops that have waiters for the stream get one).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "config/config.hpp"
#include "server/hls/hls_muxer.hpp"
#include "server/hls/hls_share.hpp"

namespace sluice::server {

class LoopContext;
class StreamRegistry;
class WorkerMesh;

// A request waiting for the next snapshot of a stream.
class HlsWaiter {
 public:
  virtual ~HlsWaiter() = default;
  // The stream published a snapshot (or stopped): look again. May remove itself.
  virtual void on_hls_update() = 0;
};

class HlsService {
 public:
  HlsService(LoopContext& loop, StreamRegistry& registry, HlsDirectory& directory, WorkerMesh* mesh);
  ~HlsService();
  HlsService(const HlsService&) = delete;
  HlsService& operator=(const HlsService&) = delete;

  enum class Open { Ok, NotLive, Full };
  // The share of app/name (`key` = "app/name") for a request, starting a muxer here when none runs
  // and the stream is live. Every request counts as a use (idle_close).
  Open open(const config::AppConfig& app, const std::string& key, std::shared_ptr<HlsShare>& out);
  // A stream was published on this loop: start its muxer unless the app starts them on demand.
  void on_publish(const config::AppConfig& app, const std::string& key);

  void add_waiter(HlsShare& share, HlsWaiter* w);
  void remove_waiter(const std::string& key, HlsWaiter* w);
  // A muxer (here or, by mesh event, on another loop) published a snapshot of key.
  void wake(const std::string& key);

  // Once a second: idle muxers stop.
  void tick(uint64_t now_ms);
  // The server stops: every muxer here ends.
  void stop();

  size_t muxer_count() const { return muxers_.size(); }
  uint64_t bytes_held() const;
  HlsDirectory& directory() { return directory_; }

 private:
  void start_muxer(const config::AppConfig& app, const std::string& key, std::shared_ptr<HlsShare> share);
  void notify(HlsShare& share);

  LoopContext& loop_;
  StreamRegistry& registry_;
  HlsDirectory& directory_;
  WorkerMesh* mesh_;
  struct Running {
    std::unique_ptr<HlsMuxer> muxer;
    config::AppRef app;  // as the muxer started: a reload changes the next stream's (docs/configuration.md)
    uint64_t last_live_ms = 0;
  };
  std::unordered_map<std::string, Running> muxers_;
  std::unordered_map<std::string, std::vector<HlsWaiter*>> waiters_;
  std::vector<HlsWaiter*> waking_;  // the waiters being woken (wake() may be re-entered)
};

}  // namespace sluice::server
