#include "server/api/alert_monitor.hpp"

#include <nlohmann/json.hpp>

#include <chrono>

#include "server/access/gate.hpp"
#include "server/api/api_view.hpp"
#include "server/api/metrics_writer.hpp"
#include "server/api/stats_api.hpp"
#include "server/io/logging.hpp"

namespace sluice::server {

namespace {

using nlohmann::json;

int64_t unix_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

// The JSON's number at `key`, or nothing (absent or null: the figure is not known yet).
std::optional<double> number(const json& j, const char* key) {
  if (!j.is_object()) return std::nullopt;
  auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

uint64_t ms(double seconds) { return seconds <= 0 ? 0 : static_cast<uint64_t>(seconds * 1000 + 0.5); }

void log_event(const AlertEvent& e) {
  if (e.raised) {
    SLUICE_LOG_WARN("event=stream_alert state=raised alert={} stream={} value={:.2f} threshold={:.2f} unit={}",
                    alert_name(e.kind), e.stream, e.value, e.threshold, alert_unit(e.kind));
  } else {
    SLUICE_LOG_INFO("event=stream_alert state=cleared alert={} stream={} value={:.2f} threshold={:.2f} unit={}{}{}",
                    alert_name(e.kind), e.stream, e.value, e.threshold, alert_unit(e.kind),
                    e.reason.empty() ? "" : " reason=", e.reason.empty() ? "" : "\"" + e.reason + "\"");
  }
}

}  // namespace

StreamObservation AlertMonitor::observation(const json& s, int64_t now_unix_ms) {
  StreamObservation o;
  const json& publisher = s.value("publisher", json());
  o.live = s.value("live", false) && publisher.is_object();
  if (o.live) {
    const auto since = number(publisher, "since_unix_ms");
    if (since && *since > 0 && now_unix_ms > *since) o.live_for_ms = static_cast<uint64_t>(now_unix_ms - *since);
  }
  const json& health = s.value("health", json());
  if (!health.is_object()) return o;
  const json& video = health.value("video", json());
  const json& audio = health.value("audio", json());
  for (const json* track : {&video, &audio}) {
    if (auto idle = number(*track, "idle_ms")) {
      const auto v = static_cast<uint64_t>(*idle);
      o.idle_ms = o.idle_ms ? std::min(*o.idle_ms, v) : v;
    }
    o.kbps += number(*track, "kbps_10s").value_or(0);
  }
  o.video = video.is_object();
  if (!o.video) return o;
  o.fps = number(video, "fps").value_or(0);
  if (auto since = number(video, "since_keyframe_s")) o.since_keyframe_ms = ms(*since);
  if (auto last = number(video.value("keyframe_interval", json()), "last_s")) {
    o.keyframe_interval_ms = static_cast<uint32_t>(ms(*last));
  }
  return o;
}

void AlertMonitor::tick(ApiView& server, AccessGate& gate, uint64_t now_ms) {
  if (now_ms < next_ms_) return;
  next_ms_ = now_ms + kPeriodMs;
  const config::Config& config = server.config();
  const bool any_rules =
      std::any_of(config.apps.begin(), config.apps.end(), [](const config::AppConfig& a) { return a.alerts.any(); });
  if (!any_rules && alerts_.tracked() == 0) return;  // nothing to follow: the streams are not even listed

  const int64_t now_unix = unix_ms();
  std::map<std::string, StreamObservation> streams;
  for (const auto& [key, j] : merged_streams(server)) streams.emplace(key, observation(j, now_unix));
  auto rules = [&config](std::string_view stream) -> const config::StreamAlertRules* {
    const config::AppConfig* app = config.find_app(stream.substr(0, stream.find('/')));
    return app != nullptr && app->type == config::AppType::Live ? &app->alerts : nullptr;
  };
  std::vector<AlertEvent> events;
  alerts_.evaluate(streams, rules, now_ms, events);
  for (const AlertEvent& e : events) {
    log_event(e);
    HookEvent h;
    const size_t slash = e.stream.find('/');
    h.app = e.stream.substr(0, slash);
    h.stream = slash == std::string::npos ? std::string() : e.stream.substr(slash + 1);
    h.alert = alert_name(e.kind);
    h.state = e.raised ? "raised" : "cleared";
    h.value = e.value;
    h.threshold = e.threshold;
    h.unit = alert_unit(e.kind);
    h.reason = e.reason;
    if (e.raised) h.raised_unix_ms = now_unix;
    gate.notify_stream_alert(std::move(h));
  }
}

json AlertMonitor::active_json(uint64_t now_ms) const {
  json list = json::array();
  for (const StreamAlerts::Active& a : alerts_.active()) {
    list.push_back({{"stream", a.stream},
                    {"alert", alert_name(a.kind)},
                    {"value", a.value},
                    {"threshold", a.threshold},
                    {"unit", alert_unit(a.kind)},
                    {"raised_s_ago", static_cast<double>(now_ms - a.raised_at_ms) / 1000}});
  }
  return json{{"alerts", list}, {"streams_followed", alerts_.tracked()}};
}

void AlertMonitor::metrics(std::string& m) const {
  std::array<size_t, kAlertKinds> active{};
  for (const StreamAlerts::Active& a : alerts_.active()) ++active[static_cast<size_t>(a.kind)];
  const auto raised = alerts_.raised_total();
  MetricsText out{m};
  auto series = [](const char* family, size_t k) {
    return std::string(family) + "{alert=\"" + alert_name(static_cast<AlertKind>(k)) + "\"}";
  };
  out.metric("sluice_stream_alerts_raised_total", "counter", "Stream alerts raised (apps.NAME.alerts), by alert.");
  for (size_t k = 0; k < kAlertKinds; ++k) {
    out.value(series("sluice_stream_alerts_raised_total", k), static_cast<double>(raised[k]));
  }
  out.metric("sluice_stream_alerts_active", "gauge", "Stream alerts raised and not cleared, by alert.");
  for (size_t k = 0; k < kAlertKinds; ++k) {
    out.value(series("sluice_stream_alerts_active", k), static_cast<double>(active[k]));
  }
}

}  // namespace sluice::server
