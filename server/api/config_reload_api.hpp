// The configuration reload as the API shows it (docs/http.md, "Configuration reload"):
// POST /api/v1/config/reload reloads the file now and answers what happened, GET tells the last
// reload; /metrics counts them. The reload itself is the composition root's (server/config_reload.cpp).
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "server/http/api.hpp"
#include "server/http/request.hpp"

namespace sluice::server {

class ApiView;

struct ReloadReport {
  // Applied: the new file is in force. Unchanged: it equals the one in force (nothing to do).
  // Invalid: it does not load (error says where, file:line:column). Refused: it loads, but a
  // change in it needs a restart or a listener could not be bound (error says which); in both
  // the configuration in force stays, whole.
  enum class Result : uint8_t { Applied, Unchanged, Invalid, Refused };
  Result result = Result::Unchanged;
  std::string trigger;               // "SIGHUP", "file change", "api"
  std::vector<std::string> changes;  // config/reload_diff.hpp
  std::string error;                 // one line per problem
  uint64_t unix_ms = 0;
  // The most CPU time any loop spent on it (worker 0: reading and checking the file too; the
  // others: swapping the snapshot in): what it cost the players of the busiest loop, whatever
  // else the machine runs (wall time would count the other processes' turns on the CPU).
  uint64_t loop_cpu_us = 0;
  bool ok() const { return result == Result::Applied || result == Result::Unchanged; }
};

// What the server keeps of its reloads (worker 0).
struct ReloadHistory {
  uint64_t succeeded = 0;   // Applied and Unchanged
  uint64_t failed = 0;      // Invalid and Refused
  uint64_t generation = 0;  // configurations applied since start
  bool last_ok = true;
  uint64_t last_unix_ms = 0;  // 0: none yet
  ReloadReport last;
  void record(const ReloadReport& r);
};

// Configuration snapshots alive in the process (the one in force, and old ones a session or a hook
// call still holds): flat over any number of reloads, or they leak.
std::atomic<int64_t>& config_snapshots_alive();

const char* reload_result_name(ReloadReport::Result r);  // "applied", "unchanged", "invalid", "refused"
nlohmann::json reload_json(const ReloadReport& r);

inline constexpr const char* kConfigReloadPath = "/api/v1/config/reload";
// POST /api/v1/config/reload: reloads, and answers through `done` once every loop has the
// configuration the reload left in force (a new listener is open everywhere, a removed one closed
// everywhere, a new key in force on every loop). false for any other request.
bool config_reload_later(ApiView& server, const HttpRequest& req, std::function<void(HttpApiReply)> done);
// The rest of the route, GET (the last reload) and other methods; path: kConfigReloadPath
// (percent-decoded, no trailing '/').
HttpApiReply config_reload_api(ApiView& server, const HttpRequest& req);
// The reload series of /metrics, appended to m.
void reload_metrics(ApiView& server, std::string& m);

}  // namespace sluice::server
