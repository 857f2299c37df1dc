// What every worker loop sees of a stream's HLS muxer (hls_muxer.hpp runs it on one loop):
// HlsShare holds the latest immutable HlsSnapshot (segments and parts as shared buffers, the
// playlists rendered once), swapped under a mutex a few times a second and read by the loops
// that answer requests. HlsDirectory finds a stream's share by name, across all loops of one
// server (the composition root makes one and hands it to every worker).
//
// Nothing on the media path locks: the muxer takes the mutex once per part to publish, a request
// once to read. Readers keep their snapshot (a shared_ptr) for as long as they send from it.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/bytes.hpp"
#include "media/hls/playlist.hpp"
#include "media/hls/segmenter.hpp"

namespace sluice::server {

struct HlsSnapshot {
  uint64_t version = 0;
  media::hls::PlaylistParams params;  // without skip and query
  std::vector<media::hls::Segment> segments;
  std::vector<media::hls::InitSegment> inits;
  Slice playlist;        // render_playlist(segments, params)
  Slice delta_playlist;  // the same with skip (low latency)
  bool ready = false;    // something every player can start with: a complete segment
  bool live = false;     // a publisher is sending
};

class HlsShare {
 public:
  HlsShare(std::string key, uint32_t worker) : key_(std::move(key)), worker_(worker) {}

  const std::string& key() const { return key_; }
  uint32_t worker() const { return worker_; }  // the loop that runs the muxer

  std::shared_ptr<const HlsSnapshot> snapshot() const {
    std::lock_guard lock(mutex_);
    return snapshot_;
  }
  void publish(std::shared_ptr<const HlsSnapshot> s) {
    std::lock_guard lock(mutex_);
    snapshot_ = std::move(s);
  }

  // Loops with requests waiting for the next part (a bit each): the muxer wakes them.
  std::atomic<uint64_t> waiting_workers{0};
  // Any loop's last request (loop time, ms): an on-demand muxer nobody asks for stops.
  std::atomic<uint64_t> last_request_ms{0};
  std::atomic<bool> closed{false};
  // For /metrics and the API, from every loop.
  std::atomic<uint64_t> requests{0};
  std::atomic<uint64_t> bytes_out{0};

 private:
  std::string key_;
  uint32_t worker_;
  mutable std::mutex mutex_;
  std::shared_ptr<const HlsSnapshot> snapshot_;
};

class HlsDirectory {
 public:
  std::shared_ptr<HlsShare> find(const std::string& key);
  // The share of key; a new one for `worker` when none is open (created = true: start a muxer).
  std::shared_ptr<HlsShare> open(const std::string& key, uint32_t worker, bool& created);
  // The muxer of `share` stopped.
  void remove(const std::shared_ptr<HlsShare>& share);
  std::vector<std::shared_ptr<HlsShare>> all();

  // Totals since start, for the counters of /metrics: what the open shares counted plus what
  // the removed ones had counted when they went (so the totals never go down).
  struct Totals {
    uint64_t muxers_started = 0;
    uint64_t requests = 0;
    uint64_t bytes_out = 0;
  };
  Totals totals();

 private:
  std::mutex mutex_;
  std::unordered_map<std::string, std::shared_ptr<HlsShare>> shares_;
  Totals retired_;  // muxers_started counts every share opened
};

}  // namespace sluice::server
