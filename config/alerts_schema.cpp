#include "config/alerts_schema.hpp"

namespace sluice::config {

void load_app_alerts(FieldReader& r, const Field& self, StreamAlertRules& alerts) {
  using std::chrono::hours;
  using std::chrono::seconds;
  using Duration = StreamAlertRules::Duration;
  Section s(r, self, {"no_media", "keyframe_interval", "fps_below", "fps_for", "bitrate_below_kbps", "bitrate_for"});
  if (!s.valid()) return;
  // Shorter than a second would raise on an encoder's normal jitter; the health figures behind
  // them are sampled a few times a second.
  auto duration = [&](const char* key, std::optional<Duration>& out) {
    Duration d{};
    if (auto f = s.take(key); f && r.read_duration(*f, d, seconds(1), hours(24), false)) out = d;
  };
  duration("no_media", alerts.no_media);
  duration("keyframe_interval", alerts.keyframe_interval);
  if (auto f = s.take("fps_below")) {
    uint32_t v = 0;
    if (r.read_uint(*f, v, 1, 1000)) alerts.fps_below = v;
  }
  if (auto f = s.take("bitrate_below_kbps")) {
    uint64_t v = 0;
    if (r.read_uint(*f, v, 1, 100'000'000)) alerts.bitrate_below_kbps = v;
  }
  if (auto f = s.take("fps_for")) r.read_duration(*f, alerts.fps_for, Duration(0), hours(24), false);
  if (auto f = s.take("bitrate_for")) r.read_duration(*f, alerts.bitrate_for, Duration(0), hours(24), false);
}

}  // namespace sluice::config
