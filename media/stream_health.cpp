#include "media/stream_health.hpp"

#include <algorithm>
#include <cmath>

namespace sluice::media {

namespace {
int32_t ms_diff(uint32_t a, uint32_t b) { return static_cast<int32_t>(a - b); }  // modular ms
}  // namespace

void StreamHealth::on_publish_start(bool takeover) {
  ++publish_starts_;
  if (takeover) ++takeovers_;
  // A new encoder's clock has nothing to do with the last one's.
  video_.started = audio_.started = false;
  last_keyframe_.reset();
  last_keyframe_at_ms_.reset();
  drift_.reset();
}

void StreamHealth::on_frame(const Frame& f, uint64_t now_ms) {
  if (f.sequence_header || (f.kind != FrameKind::Video && f.kind != FrameKind::Audio)) return;
  TrackState& t = f.kind == FrameKind::Video ? video_ : audio_;
  add(t, f, now_ms);
  if (f.kind == FrameKind::Video && f.keyframe) {
    if (last_keyframe_ && ms_diff(f.timestamp, *last_keyframe_) > 0) {
      keyframe_intervals_.push_back(static_cast<uint32_t>(ms_diff(f.timestamp, *last_keyframe_)));
      if (keyframe_intervals_.size() > kKeyframeIntervals) keyframe_intervals_.pop_front();
    }
    last_keyframe_ = f.timestamp;
    last_keyframe_at_ms_ = now_ms;
  }
  // Drift: how the two media clocks compare at the same arrival time, smoothed over ~32 frames.
  if (video_.started && audio_.started && now_ms - video_.last_at_ms < 1000 && now_ms - audio_.last_at_ms < 1000) {
    const auto d = static_cast<double>(audio_.clock_offset - video_.clock_offset);
    drift_ = drift_ ? *drift_ + (d - *drift_) / 32 : d;
  }
}

void StreamHealth::add(TrackState& t, const Frame& f, uint64_t now_ms) {
  if (t.started && ms_diff(f.timestamp, t.last_timestamp) < 0) ++t.backwards;
  // The offset of the media clock against arrivals, unwrapped around the last one.
  const int64_t offset = static_cast<int64_t>(f.timestamp) - static_cast<int64_t>(now_ms);
  t.clock_offset =
      t.started ? t.clock_offset + ms_diff(f.timestamp, t.last_timestamp) - static_cast<int64_t>(now_ms - t.last_at_ms)
                : offset;
  t.started = true;
  t.last_timestamp = f.timestamp;
  t.last_at_ms = now_ms;
  ++t.frames;
  t.recent.push_back({now_ms, f.timestamp, static_cast<uint32_t>(f.payload.size())});
  while (!t.recent.empty() && now_ms - t.recent.front().at_ms > kLongWindowMs) t.recent.pop_front();
  // A bound for a source that sends thousands of tiny frames a second.
  while (t.recent.size() > 20'000) t.recent.pop_front();
}

StreamHealth::Track StreamHealth::figures_of(const TrackState& t, uint64_t now_ms) const {
  Track out;
  out.present = t.frames > 0;
  out.frames = t.frames;
  out.backwards = t.backwards;
  if (!out.present) return out;
  out.idle_ms = now_ms - t.last_at_ms;
  uint64_t bytes_1s = 0, bytes_10s = 0;
  for (const Arrival& a : t.recent) {
    if (now_ms - a.at_ms > kLongWindowMs) continue;
    bytes_10s += a.bytes;
    if (now_ms - a.at_ms <= 1000) bytes_1s += a.bytes;
  }
  // Over the time the window covers so far (a stream 3 s old is not averaged over 10).
  const uint64_t covered = t.recent.empty() ? 0 : std::min<uint64_t>(kLongWindowMs, now_ms - t.recent.front().at_ms);
  out.kbps_1s = static_cast<double>(bytes_1s) * 8 / 1000;
  if (covered > 0) out.kbps_10s = static_cast<double>(bytes_10s) * 8 / static_cast<double>(covered);
  // Frames per second from media time: the frames of the last kFpsWindowMs of timestamps.
  if (t.recent.size() >= 2 && now_ms - t.last_at_ms < 2000) {
    const uint32_t newest = t.recent.back().timestamp;
    size_t count = 0;
    uint32_t oldest = newest;
    for (auto it = t.recent.rbegin(); it != t.recent.rend(); ++it) {
      const int32_t age = ms_diff(newest, it->timestamp);
      if (age < 0) continue;  // stamped after the newest: out of order, left out
      if (age > static_cast<int32_t>(kFpsWindowMs)) break;
      ++count;
      if (ms_diff(it->timestamp, oldest) < 0) oldest = it->timestamp;
    }
    const int32_t span = ms_diff(newest, oldest);
    if (count >= 2 && span > 0) out.fps = static_cast<double>(count - 1) * 1000 / span;
  }
  return out;
}

StreamHealth::Figures StreamHealth::figures(uint64_t now_ms) const {
  Figures out;
  out.video = figures_of(video_, now_ms);
  out.audio = figures_of(audio_, now_ms);
  if (!keyframe_intervals_.empty()) {
    uint64_t sum = 0;
    for (uint32_t i : keyframe_intervals_) {
      sum += i;
      out.video.keyframe_interval_max_ms = std::max(out.video.keyframe_interval_max_ms, i);
    }
    out.video.keyframe_interval_last_ms = keyframe_intervals_.back();
    out.video.keyframe_interval_mean_ms = static_cast<uint32_t>(sum / keyframe_intervals_.size());
  }
  if (last_keyframe_at_ms_) out.video.since_keyframe_ms = now_ms - *last_keyframe_at_ms_;
  if (drift_) out.av_drift_ms = static_cast<int32_t>(std::lround(*drift_));
  out.timestamp_jumps = timestamp_jumps_;
  out.publish_starts = publish_starts_;
  out.takeovers = takeovers_;
  return out;
}

}  // namespace sluice::media
