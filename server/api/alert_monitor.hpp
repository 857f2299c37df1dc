// AlertMonitor: the stream alerts on the running server (docs/configuration.md, "Stream alerts").
// Worker 0 reads every stream's health from the view the API shows (the streams of every loop,
// merged), runs the rules (stream_alerts.hpp) a few times a second, and tells each raise and clear
// to the log (event=stream_alert), to hooks.on_stream_alert (retried like the done hooks), to
// GET /api/v1/alerts and to /metrics.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <map>
#include <string>

#include "server/api/stream_alerts.hpp"

namespace sluice::server {

class AccessGate;
class ApiView;

class AlertMonitor {
 public:
  static constexpr uint64_t kPeriodMs = 500;

  // From worker 0's tick; runs the rules every kPeriodMs. `now_ms`: the loop's clock.
  void tick(ApiView& server, AccessGate& gate, uint64_t now_ms);

  nlohmann::json active_json(uint64_t now_ms) const;  // GET /api/v1/alerts
  void metrics(std::string& m) const;                 // appended to /metrics

  // A stream's figures as the rules read them, from its JSON in the API's streams list.
  static StreamObservation observation(const nlohmann::json& stream, int64_t now_unix_ms);

 private:
  StreamAlerts alerts_;
  uint64_t next_ms_ = 0;
};

}  // namespace sluice::server
