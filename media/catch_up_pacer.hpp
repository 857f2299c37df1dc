// CatchUpPacer: how fast a live player that joined on the GOP cache's keyframe is given the media
// it is behind by (docs/srt.md, "Readers"). A join finds up to a GOP (seconds) in the player's
// queue; a transport that sends datagrams as fast as it is handed them (libsrt at its 1 Gb/s
// default) would put the whole GOP on the wire in a few ms, more than a player's UDP receive
// buffer holds, and what overflows is lost and asked for again when it is already late. So the
// backlog goes out at kSpeed times real time, its first kLeadMs at once (the first picture, and a
// start for the decoder); once the player's queue has been empty it is at the live edge, where
// the media arrives at real time anyway, and the pacer steps aside for good (a timeline that
// jumps later, a takeover's, never holds a player back). Sans-I/O: timestamps and `now` in, how
// long to wait out.
#pragma once

#include <cstdint>

namespace sluice::media {

class CatchUpPacer {
 public:
  static constexpr uint64_t kSpeed = 2;
  static constexpr uint64_t kLeadMs = 500;
  // A frame this far past the one before is a jump of the timeline, not a backlog: no waiting on it.
  static constexpr int32_t kJumpMs = 5000;

  // A frame with this timestamp (ms, modular) was handed to the transport at `now_ms`.
  void sent(uint32_t timestamp, uint64_t now_ms);
  // A replay from another worker loop arrives in portions (the mesh delivers what the owner has
  // posted so far): an empty queue this soon after the first frame is no live edge. Pacing on
  // meanwhile costs nothing at a real one (the allowance runs at twice the media's rate).
  static constexpr uint64_t kSettleMs = 1000;

  // The player's queue is empty at `now_ms`: it is at the live edge. Not before its first frame (a
  // reader's first flush may come before its join's backlog is queued) nor within kSettleMs of it.
  void caught_up(uint64_t now_ms) { done_ = done_ || (started_ && now_ms - start_ms_ >= kSettleMs); }
  bool done() const { return done_; }
  // How long to wait before handing over more (0: go on).
  uint64_t wait_ms(uint64_t now_ms) const;

 private:
  bool started_ = false;
  bool done_ = false;
  uint32_t first_ts_ = 0;
  uint64_t start_ms_ = 0;
  int64_t ahead_ms_ = 0;  // media time handed over since the first frame
};

}  // namespace sluice::media
