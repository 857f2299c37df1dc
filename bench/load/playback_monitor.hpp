// PlaybackMonitor: what a player measures on the media it receives, independent of transport
// (the RTMP player feeds it messages, the HTTP-FLV player the same tags from the response body).
//
//  - Time to first frame: from the moment play was sent to the first video message carrying a
//    picture (sequence headers excluded), and whether that picture was a keyframe.
//  - Monotonicity: a message whose timestamp goes back against the previous one of its type
//    (audio, video), in serial arithmetic because RTMP timestamps wrap at 2^32.
//  - Stalls: a player that started its clock on the first frame shows media at wall-clock pace;
//    when the newest media time received falls behind the wall time elapsed by more than the
//    threshold, the player would have run dry. That is counted once per episode: the episode
//    ends when media arrives again, and the clock restarts from there, as a player rebuffers.
#pragma once

#include <cstdint>
#include <span>

#include "bench/load/client.hpp"

namespace sluice::bench {

class PlaybackMonitor {
 public:
  explicit PlaybackMonitor(uint32_t stall_ms) : stall_ns_(int64_t{stall_ms} * 1'000'000) {}

  void on_play_sent(int64_t now_ns) { play_sent_ns_ = now_ns; }
  // Any audio (8), video (9) or data (18) message.
  void on_media(uint8_t type, uint32_t timestamp, std::span<const uint8_t> payload, int64_t now_ns, ClientStats& s);
  // Detects a stall while nothing arrives.
  void check(int64_t now_ns, ClientStats& s);

 private:
  void advance_clock(uint32_t timestamp, int64_t now_ns, ClientStats& s);
  int64_t lag_ns(int64_t now_ns) const { return (now_ns - wall0_ns_) - (media_ms_ - media0_ms_) * 1'000'000; }

  int64_t stall_ns_;
  int64_t play_sent_ns_ = 0;
  // Media clock: media_ms_ is the newest timestamp seen, unwrapped; wall0/media0 are where the
  // clock was (re)started.
  int64_t wall0_ns_ = 0;
  int64_t media0_ms_ = 0;
  int64_t media_ms_ = 0;
  uint32_t clock_ref_ts_ = 0;
  uint32_t last_ts_[2] = {0, 0};  // audio, video
  bool have_last_[2] = {false, false};
  bool clock_started_ = false;
  bool in_stall_ = false;
};

}  // namespace sluice::bench
