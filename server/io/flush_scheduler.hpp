// FlushScheduler: when sockets with output get flushed, one per loop for every kind of writer
// (RTMP connections, HTTP responses, whatever comes next). Control replies and anything urgent go
// out at the end of the loop iteration (a uv_check handle); live media may be held (a uv_timer
// started by the first held socket) so that each player gets a few larger writes instead of one
// per message, and the players of one moment are written by one io_uring submit. How long follows
// the load (WriteHold). With many players the hold is cut into lanes (lanes_for): lane i is
// written at i/lanes of the hold, so each player still gets one write per hold, but a pass writes
// a few hundred sockets, not thousands, and the last of them do not wait for the whole pass (at
// 2000 players that pass was tens of ms added to every message of the last sockets).
// See FlushList for the bookkeeping and docs/architecture.md, "The fan-out data path".
#pragma once

#include <uv.h>

#include <cstdint>
#include <string>

#include "server/io/flush_list.hpp"
#include "server/io/write_hold.hpp"
#include "server/io/write_ring.hpp"

namespace sluice::server {

// What the scheduler flushes. The three fields are the FlushList's bookkeeping; nobody else
// writes them.
class Flushable {
 public:
  virtual void flush() = 0;
  virtual void close(const std::string& reason) = 0;

  bool in_flush_list = false;
  bool in_delayed_list = false;
  uint32_t hold_slot = 0;            // picks its hold lane; given on its first hold
  std::string pending_close_reason;  // close at the next drain (set by schedule_close)

 protected:
  ~Flushable() = default;
};

class FlushScheduler {
 public:
  FlushScheduler() = default;
  FlushScheduler(const FlushScheduler&) = delete;
  FlushScheduler& operator=(const FlushScheduler&) = delete;

  // The hold follows `hold` (a ceiling of 0 turns holding off: held output is flushed at the end
  // of the iteration too), written in at most `max_lanes` lanes.
  void start(uv_loop_t* loop, WriteHold hold, size_t max_lanes = kDefaultMaxLanes);
  // With a ring, the sockets flushed in one pass of a drain queue their writes on it and the pass
  // ends with one submit for all of them (see WriteRing).
  void use_ring(WriteRing* ring) { ring_ = ring; }

  void flush_soon(Flushable* f) {
    list_.add(f);
    keep_awake();
  }
  void flush_held(Flushable* f);
  void cancel(Flushable* f) { list_.remove(f); }

  // The ring to queue a write on: only inside a drain, whose pass end submits it.
  WriteRing* batching_ring() const { return draining_ ? ring_ : nullptr; }
  // Sends what is queued on the ring now (a socket that closes mid-pass).
  void submit_now() {
    if (ring_ != nullptr) ring_->submit();
  }

  void close_handles();

  // How long live media waits now, ms, and in how many lanes.
  uint64_t hold_ms() const { return hold_.hold_ms(); }
  size_t hold_lanes() const { return list_.lanes(); }

  // Lanes for a hold of `hold_ms` over `sockets` sockets: one per kSocketsPerLane, at most
  // `max_lanes`, and none shorter than kMinLaneMs.
  // Below 2000 sockets one pass is short enough (p99 added delay about 120 ms at 1000 players
  // with a 100 ms hold), and lanes cost writes: a burst that goes out at once (a keyframe)
  // realigns a single hold to the media, not a lane grid (docs/benchmarks.md, "Lanes").
  static constexpr size_t kSocketsPerLane = 1000;
  static constexpr size_t kDefaultMaxLanes = 8;
  static constexpr uint64_t kMinLaneMs = 5;
  static size_t lanes_for(size_t sockets, uint64_t hold_ms, size_t max_lanes = kDefaultMaxLanes);

 private:
  static void on_hold_over(uv_timer_t* timer);
  void hold_lane_over();
  void arm_lane_timer();
  void end_period();
  // The lanes for the next period (lanes_for, with a margin before going down).
  size_t next_lanes(size_t sockets) const;
  void drain();
  // Output queued from a timer callback (VOD pacing, pings) must not wait in poll for the next
  // socket event: an active idle handle makes this iteration's poll return at once, so the check
  // handle drains right after.
  void keep_awake();

  FlushList<Flushable> list_;
  uv_check_t check_{};
  uv_idle_t idle_{};
  uv_timer_t hold_timer_{};
  WriteHold hold_;
  size_t period_sockets_ = 0;  // sockets given held media since the current period began
  size_t lane_ = 0;            // the lane the timer writes next
  size_t max_lanes_ = kDefaultMaxLanes;
  WriteRing* ring_ = nullptr;
  bool draining_ = false;
  bool started_ = false;
};

}  // namespace sluice::server
