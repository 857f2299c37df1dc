#include "bench/load/playback_monitor.hpp"

#include "bench/load/video_tag.hpp"

namespace sluice::bench {

namespace {

constexpr uint8_t kAudio = 8;
constexpr uint8_t kVideo = 9;
// A timestamp jump larger than this is a discontinuity (publisher restarted, server re-based),
// not media: the clock restarts instead of reporting a huge buffer or a stall.
constexpr int32_t kDiscontinuityMs = 5000;

// AAC sequence headers and AVC/HEVC configuration are not media time: servers send them to late
// joiners with old or zero timestamps, which would start the clock in the wrong place.
bool is_config(uint8_t type, std::span<const uint8_t> p) {
  constexpr uint8_t kAac = 10;
  if (type == kAudio) return p.size() >= 2 && (p[0] >> 4) == kAac && p[1] == 0;
  return !classify_video(p).picture;
}

}  // namespace

void PlaybackMonitor::on_media(uint8_t type, uint32_t timestamp, std::span<const uint8_t> payload, int64_t now_ns,
                               ClientStats& s) {
  ++s.messages_in;
  if (type != kAudio && type != kVideo) return;
  const int slot = type == kVideo ? 1 : 0;
  if (have_last_[slot] && static_cast<int32_t>(timestamp - last_ts_[slot]) < 0) ++s.non_monotonic;
  last_ts_[slot] = timestamp;
  have_last_[slot] = true;

  if (type == kVideo && s.ttff_ns < 0) {
    const VideoTagInfo info = classify_video(payload);
    if (info.picture) {
      s.ttff_ns = now_ns - play_sent_ns_;
      s.first_frame_keyframe = info.keyframe;
    }
  }
  if (!is_config(type, payload)) advance_clock(timestamp, now_ns, s);
}

void PlaybackMonitor::advance_clock(uint32_t timestamp, int64_t now_ns, ClientStats& s) {
  if (!clock_started_) {
    clock_started_ = true;
    clock_ref_ts_ = timestamp;
    wall0_ns_ = now_ns;
    return;
  }
  const auto delta = static_cast<int32_t>(timestamp - clock_ref_ts_);
  if (delta > kDiscontinuityMs || delta < -kDiscontinuityMs) {
    clock_ref_ts_ = timestamp;
    wall0_ns_ = now_ns;
    media0_ms_ = media_ms_;
    in_stall_ = false;
    return;
  }
  if (delta > 0) {
    media_ms_ += delta;
    clock_ref_ts_ = timestamp;
  }
  if (in_stall_) {
    // Media flows again: the episode is over and playback restarts from here.
    in_stall_ = false;
    wall0_ns_ = now_ns;
    media0_ms_ = media_ms_;
    return;
  }
  if (lag_ns(now_ns) > stall_ns_) {
    // It arrived too late: the player ran dry just before. One episode, already over.
    ++s.stalls;
    wall0_ns_ = now_ns;
    media0_ms_ = media_ms_;
  }
}

void PlaybackMonitor::check(int64_t now_ns, ClientStats& s) {
  if (!clock_started_ || in_stall_) return;
  if (lag_ns(now_ns) > stall_ns_) {
    ++s.stalls;
    in_stall_ = true;
  }
}

}  // namespace sluice::bench
