// StreamHealth: what a stream's publisher is really sending, measured from the frames as they
// arrive on the owning loop (docs/api.md, "Stream health"), beside what its metadata claims.
// Sans-I/O: each frame comes with its arrival time (ms, the loop's clock).
//
// Per track (video, audio; the default track of a multitrack stream):
//  - bitrate over the last 1 s and 10 s of arrivals (payload bytes, kbit/s);
//  - frames per second from the media timestamps of the last 5 s (frames less one over the time
//    they span: an encoder's rate, unaffected by network bunching);
//  - video: the keyframe interval (last, mean and max of the last 16), from media timestamps;
//  - time since the last frame (what a frozen or vanished encoder shows first);
//  - frames whose timestamp went back (late or reordered by the source).
// For the stream: the audio/video drift, how far the audio's media clock runs ahead of the
// video's for frames arriving at the same time (smoothed), the timestamp jumps the publisher
// side closed up, and publish starts (reconnects) and takeovers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>

#include "media/frame.hpp"

namespace sluice::media {

class StreamHealth {
 public:
  struct Track {
    bool present = false;
    double kbps_1s = 0;
    double kbps_10s = 0;
    double fps = 0;
    uint64_t frames = 0;
    uint64_t backwards = 0;           // frames stamped before the one before them
    std::optional<uint64_t> idle_ms;  // since the last frame; none before the first
    // Video only: keyframe intervals in ms (0 until two keyframes came).
    uint32_t keyframe_interval_last_ms = 0;
    uint32_t keyframe_interval_mean_ms = 0;
    uint32_t keyframe_interval_max_ms = 0;
    // Since the last keyframe arrived (none before the first, and after a new publisher began):
    // what shows an encoder's long GOP before its next keyframe comes.
    std::optional<uint64_t> since_keyframe_ms;
  };
  struct Figures {
    Track video, audio;
    std::optional<int32_t> av_drift_ms;  // audio clock ahead of video's (+) or behind (-)
    uint64_t timestamp_jumps = 0;
    uint32_t publish_starts = 0;
    uint32_t takeovers = 0;
  };

  // Windows: fps over the last 5 s of media time; bitrate over 1 s and 10 s of arrivals.
  static constexpr uint32_t kFpsWindowMs = 5000;
  static constexpr uint64_t kLongWindowMs = 10'000;
  static constexpr size_t kKeyframeIntervals = 16;

  // Audio and video frames (sequence headers and data are not media: not counted).
  void on_frame(const Frame& f, uint64_t now_ms);
  void on_timestamp_jump() { ++timestamp_jumps_; }
  // A publisher began: `takeover` when it took the name over from another one.
  void on_publish_start(bool takeover);

  Figures figures(uint64_t now_ms) const;

 private:
  struct Arrival {
    uint64_t at_ms;
    uint32_t timestamp;
    uint32_t bytes;
  };
  struct TrackState {
    std::deque<Arrival> recent;  // the last kLongWindowMs of arrivals
    uint64_t frames = 0;
    uint64_t backwards = 0;
    bool started = false;
    uint32_t last_timestamp = 0;
    uint64_t last_at_ms = 0;
    int64_t clock_offset = 0;  // media timestamp less arrival, of the last frame
  };
  void add(TrackState& t, const Frame& f, uint64_t now_ms);
  Track figures_of(const TrackState& t, uint64_t now_ms) const;

  TrackState video_, audio_;
  std::deque<uint32_t> keyframe_intervals_;
  std::optional<uint32_t> last_keyframe_;
  std::optional<uint64_t> last_keyframe_at_ms_;  // its arrival
  std::optional<double> drift_;
  uint64_t timestamp_jumps_ = 0;
  uint32_t publish_starts_ = 0;
  uint32_t takeovers_ = 0;
};

}  // namespace sluice::media
