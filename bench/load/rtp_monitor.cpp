#include "bench/load/rtp_monitor.hpp"

#include <algorithm>

namespace sluice::bench {

namespace {
constexpr size_t kRtpHeader = 12;
constexpr int64_t kVideoClockHz = 90'000;
// A sequence number this far ahead of the highest seen is a jump forward; further back, a late
// packet (RFC 3550 A.1's MAX_DROPOUT, simplified: no restart detection).
constexpr uint16_t kMaxDropout = 3000;
constexpr int64_t kClockSkipNs = 2'000'000'000;  // the GOP cache's burst
}  // namespace

void RtpMonitor::Sequence::add(uint16_t seq) {
  ++received;
  if (!started) {
    started = true;
    max = seq;
    base = seq;
    return;
  }
  const auto delta = static_cast<uint16_t>(seq - max);
  if (delta != 0 && delta < kMaxDropout) {
    if (seq < max) cycles += 1u << 16;  // wrapped
    max = seq;
  }
  // Otherwise a duplicate or a late (reordered) packet: it only counts as received.
}

void RtpMonitor::on_rtp(std::span<const uint8_t> d, int64_t now_ns, ClientStats& s) {
  if (d.size() < kRtpHeader || (d[0] >> 6) != 2) return;
  ++s.messages_in;
  const bool marker = (d[1] & 0x80) != 0;
  const uint8_t pt = d[1] & 0x7F;
  const auto seq = static_cast<uint16_t>(d[2] << 8 | d[3]);
  const uint32_t ts = uint32_t{d[4]} << 24 | uint32_t{d[5]} << 16 | uint32_t{d[6]} << 8 | d[7];
  const uint32_t ssrc = uint32_t{d[8]} << 24 | uint32_t{d[9]} << 16 | uint32_t{d[10]} << 8 | d[11];
  const bool video = video_ssrc_ != 0 ? ssrc == video_ssrc_ : pt == video_pt_;
  if (!video) {
    audio_.add(seq);
    return;
  }
  video_.add(seq);
  if (marker) on_frame_end(ts, now_ns, s);
}

void RtpMonitor::on_frame_end(uint32_t ts, int64_t now_ns, ClientStats& s) {
  if (have_frame_ && ts == last_frame_ts_) return;  // a second marker for the same picture
  const uint64_t lost = video_.lost();
  if (have_frame_ && lost > lost_at_frame_start_) ++frames_incomplete_;
  lost_at_frame_start_ = lost;
  ++frames_;
  if (!have_frame_) {
    have_frame_ = true;
    first_frame_ns_ = now_ns;
    if (s.ttff_ns < 0) s.ttff_ns = now_ns - offer_sent_ns_;
  } else {
    const auto delta = static_cast<int32_t>(ts - last_frame_ts_);
    if (delta < 0) ++s.non_monotonic;
    if (clock_ref_ns_ != 0) {
      media_ticks_ += delta;
    } else if (now_ns - first_frame_ns_ >= kClockSkipNs) {
      clock_ref_ns_ = now_ns;
    }
    const int64_t gap = now_ns - last_frame_ns_;
    max_frame_gap_ns_ = std::max(max_frame_gap_ns_, gap);
    // A frame that ends a gap check() has not seen yet (between two ticks) still ends a freeze.
    if (!in_freeze_ && gap > freeze_ns_) ++s.stalls;
  }
  in_freeze_ = false;
  last_frame_ts_ = ts;
  last_frame_ns_ = now_ns;
}

void RtpMonitor::check(int64_t now_ns, ClientStats& s) {
  if (!have_frame_ || in_freeze_ || now_ns - last_frame_ns_ <= freeze_ns_) return;
  ++s.stalls;
  in_freeze_ = true;
}

RtpMonitor::Figures RtpMonitor::figures() const {
  Figures f;
  f.video_packets = video_.received;
  f.video_lost = video_.lost();
  f.audio_packets = audio_.received;
  f.audio_lost = audio_.lost();
  f.frames = frames_;
  f.frames_incomplete = frames_incomplete_;
  f.max_frame_gap_ns = max_frame_gap_ns_;
  const int64_t wall = last_frame_ns_ - clock_ref_ns_;
  if (clock_ref_ns_ != 0 && wall >= kClockSkipNs) {
    f.video_clock_ratio = static_cast<double>(media_ticks_) / kVideoClockHz / (static_cast<double>(wall) / 1e9);
  }
  return f;
}

}  // namespace sluice::bench
