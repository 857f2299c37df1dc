// StreamAlerts: the stream alerts of apps.NAME.alerts (config/alerts.hpp, docs/configuration.md
// "Stream alerts"), raised and cleared from what the streams' health shows (media/stream_health.hpp).
// Sans-I/O: worker 0 feeds it every stream it knows a few times a second (alert_monitor.hpp) and
// sends on the events it returns. Each alert of a stream is raised once and cleared once.
//
// - no_media: nothing arrived for the rule's time, whether the publisher froze or left (a stream
//   seen live is followed after it ends, until its media comes back).
// - keyframe_interval: the last interval, or the time since the last keyframe, is longer; cleared
//   once an interval at or under the rule has been measured.
// - fps_below, bitrate_below_kbps: under the threshold for the rule's `for` on end, once the
//   stream is old enough for the figure to mean something (5 s of frames, 10 s of bitrate).
// These three describe what a publisher sends: while nobody publishes they stand still, and after
// kPublisherGoneMs without one they clear ("publisher left").
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/alerts.hpp"

namespace sluice::server {

enum class AlertKind : uint8_t { NoMedia, KeyframeInterval, LowFps, LowBitrate };
inline constexpr size_t kAlertKinds = 4;
const char* alert_name(AlertKind k);  // "no_media", "keyframe_interval", "fps_below", "bitrate_below"
const char* alert_unit(AlertKind k);  // "s", "s", "fps", "kbps"

// What the server knows of a stream now.
struct StreamObservation {
  bool live = false;                // a publisher sends it
  uint64_t live_for_ms = 0;         // since that publisher began
  std::optional<uint64_t> idle_ms;  // since the last audio or video frame; none before the first
  bool video = false;
  double fps = 0;
  double kbps = 0;                            // audio and video, over the last 10 s
  uint32_t keyframe_interval_ms = 0;          // the last one; 0 before the second keyframe
  std::optional<uint64_t> since_keyframe_ms;  // none before the first keyframe
};

struct AlertEvent {
  std::string stream;  // "app/name"
  AlertKind kind = AlertKind::NoMedia;
  bool raised = false;  // or cleared
  double value = 0;     // the figure now, in alert_unit()
  double threshold = 0;
  std::string reason;  // cleared without the figure coming back: "publisher left", "rule removed", ...
};

class StreamAlerts {
 public:
  static constexpr uint64_t kPublisherGoneMs = 10'000;
  static constexpr uint32_t kFpsSettleMs = 5'000;
  static constexpr uint32_t kBitrateSettleMs = 10'000;
  // Streams followed at most; past it the ones gone longest are dropped (their alerts cleared).
  static constexpr size_t kMaxTracked = 1000;

  // The rules of a stream's app, or nullptr (none, or not a live app).
  using RulesFor = std::function<const config::StreamAlertRules*(std::string_view stream)>;

  // One round over every stream the server knows (a stream followed before and missing now is not
  // live); the events of the round are appended to `out`.
  void evaluate(const std::map<std::string, StreamObservation>& streams, const RulesFor& rules, uint64_t now_ms,
                std::vector<AlertEvent>& out);

  struct Active {
    std::string stream;
    AlertKind kind;
    double value;
    double threshold;
    uint64_t raised_at_ms;
  };
  std::vector<Active> active() const;
  std::array<uint64_t, kAlertKinds> raised_total() const { return raised_total_; }
  size_t tracked() const { return tracks_.size(); }

 private:
  struct Condition {
    bool raised = false;
    std::optional<uint64_t> bad_since_ms;
    double value = 0;
    double threshold = 0;
    uint64_t raised_at_ms = 0;
  };
  struct Track {
    uint64_t last_media_ms = 0;
    uint64_t last_live_ms = 0;
    bool live = false;  // in the last round
    std::array<Condition, kAlertKinds> conditions;
    bool any_raised() const;
  };

  void observe(const std::string& key, Track& t, const config::StreamAlertRules& rules, const StreamObservation* o,
               uint64_t now_ms, std::vector<AlertEvent>& out);
  // bad: the figure is past the threshold now (nullopt: unknown, nothing changes).
  void step(const std::string& key, Track& t, AlertKind kind, std::optional<bool> bad, double value, double threshold,
            uint64_t hold_ms, uint64_t now_ms, std::vector<AlertEvent>& out);
  void clear(const std::string& key, Track& t, AlertKind kind, const char* reason, std::vector<AlertEvent>& out);
  void clear_all(const std::string& key, Track& t, const char* reason, std::vector<AlertEvent>& out);
  void bound(std::vector<AlertEvent>& out);

  std::map<std::string, Track, std::less<>> tracks_;
  std::array<uint64_t, kAlertKinds> raised_total_{};
};

}  // namespace sluice::server
