// apps.NAME.alerts: the stream alerts of a live app (docs/configuration.md, "Stream alerts").
// Each rule is off unless set; server/api/stream_alerts.hpp raises and clears them.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>

namespace sluice::config {

struct StreamAlertRules {
  using Duration = std::chrono::milliseconds;
  // No audio or video frame for this long: the encoder froze, or its publisher left.
  std::optional<Duration> no_media;
  // A keyframe interval longer than this (or this long already since the last keyframe): players
  // wait that long to start, and a lost packet costs that long of picture.
  std::optional<Duration> keyframe_interval;
  // Video under this many frames per second, for fps_for on end.
  std::optional<uint32_t> fps_below;
  Duration fps_for = std::chrono::seconds(10);
  // Audio and video together under this many kbit/s (over 10 s), for bitrate_for on end.
  std::optional<uint64_t> bitrate_below_kbps;
  Duration bitrate_for = std::chrono::seconds(10);

  bool any() const { return no_media || keyframe_interval || fps_below || bitrate_below_kbps; }
  bool operator==(const StreamAlertRules&) const = default;
};

}  // namespace sluice::config
