#include "server/api/config_reload_api.hpp"

#include <cstdio>
#include <exception>

#include "server/api/api_json.hpp"
#include "server/api/api_view.hpp"

namespace sluice::server {

using nlohmann::json;

void ReloadHistory::record(const ReloadReport& r) {
  if (r.ok()) {
    ++succeeded;
  } else {
    ++failed;
  }
  if (r.result == ReloadReport::Result::Applied) ++generation;
  last_ok = r.ok();
  last_unix_ms = r.unix_ms;
  last = r;
}

std::atomic<int64_t>& config_snapshots_alive() {
  static std::atomic<int64_t> alive{0};
  return alive;
}

const char* reload_result_name(ReloadReport::Result r) {
  switch (r) {
    case ReloadReport::Result::Applied: return "applied";
    case ReloadReport::Result::Unchanged: return "unchanged";
    case ReloadReport::Result::Invalid: return "invalid";
    case ReloadReport::Result::Refused: return "refused";
  }
  return "unknown";
}

json reload_json(const ReloadReport& r) {
  json j{{"result", reload_result_name(r.result)}, {"trigger", r.trigger}, {"changes", r.changes}};
  if (!r.error.empty()) j["error"] = r.error;
  if (r.unix_ms != 0) j["time_ms"] = r.unix_ms;
  j["loop_cpu_ms"] = static_cast<double>(r.loop_cpu_us) / 1000.0;
  return j;
}

namespace {

HttpApiReply reload_answer(const ReloadReport& r) {
  // 422: the file is wrong; 409: it is right but cannot be applied to the running server.
  const int status = r.result == ReloadReport::Result::Invalid   ? 422
                     : r.result == ReloadReport::Result::Refused ? 409
                                                                 : 200;
  return json_reply(status, reload_json(r));
}

}  // namespace

bool config_reload_later(ApiView& server, const HttpRequest& req, std::function<void(HttpApiReply)> done) {
  std::string path;
  if (req.method != "POST" || !http_percent_decode(req.path, path)) return false;
  if (path.size() > 1 && path.back() == '/') path.pop_back();
  if (path != kConfigReloadPath) return false;
  server.reload_config("api", [done = std::move(done)](const ReloadReport& r) {
    // No exception may cross the loop's callback: a reply that cannot be built is a 500.
    HttpApiReply reply;
    try {
      reply = reload_answer(r);
    } catch (const std::exception& e) {
      reply = HttpApiReply{500, "text/plain", e.what(), ""};
    }
    done(std::move(reply));
  });
  return true;
}

HttpApiReply config_reload_api(ApiView& server, const HttpRequest& req) {
  if (req.method == "GET" || req.method == "HEAD") {
    const ReloadHistory& h = server.reload_history();
    json j{{"generation", h.generation},
           {"succeeded", h.succeeded},
           {"failed", h.failed},
           {"snapshots_alive", config_snapshots_alive().load()}};
    j["last"] = h.last_unix_ms == 0 ? json(nullptr) : reload_json(h.last);
    return json_reply(200, j);
  }
  HttpApiReply r = error_reply(405, "use POST to reload, GET to see the last reload");
  r.headers = "Allow: GET, HEAD, POST\r\n";
  return r;
}

void reload_metrics(ApiView& server, std::string& m) {
  const ReloadHistory& h = server.reload_history();
  char buf[160];
  std::snprintf(buf, sizeof buf,
                "sluice_config_reloads_total{result=\"ok\"} %llu\nsluice_config_reloads_total{result=\"error\"} %llu\n",
                static_cast<unsigned long long>(h.succeeded), static_cast<unsigned long long>(h.failed));
  m += "# HELP sluice_config_reloads_total Configuration reloads (SIGHUP, file change, API) by result.\n"
       "# TYPE sluice_config_reloads_total counter\n";
  m += buf;
  std::snprintf(buf, sizeof buf, "sluice_config_last_reload_successful %d\n", h.last_ok ? 1 : 0);
  m += "# HELP sluice_config_last_reload_successful Whether the last reload left the file's configuration in "
       "force.\n# TYPE sluice_config_last_reload_successful gauge\n";
  m += buf;
  std::snprintf(buf, sizeof buf, "sluice_config_generation %llu\n", static_cast<unsigned long long>(h.generation));
  m += "# HELP sluice_config_generation Configurations applied by reloads since the start.\n"
       "# TYPE sluice_config_generation gauge\n";
  m += buf;
  std::snprintf(buf, sizeof buf, "sluice_config_snapshots %lld\n",
                static_cast<long long>(config_snapshots_alive().load()));
  m += "# HELP sluice_config_snapshots Configuration snapshots in memory: the one in force and old ones still "
       "held by sessions admitted under them.\n# TYPE sluice_config_snapshots gauge\n";
  m += buf;
}

}  // namespace sluice::server
