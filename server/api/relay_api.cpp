#include "server/api/relay_api.hpp"

#include <cstdio>
#include <map>

#include "config/relay.hpp"
#include "server/access/query.hpp"
#include "server/api/api_json.hpp"
#include "server/live/worker_mesh.hpp"
#include "server/relay/relay_manager.hpp"
#include "server/relay/runtime_targets.hpp"
#include "server/api/api_view.hpp"
#include "config/config.hpp"

namespace sluice::server {

namespace {

using nlohmann::json;
constexpr std::string_view kPush = "/api/v1/relays/push";

std::vector<std::string> split_names(const std::string& list) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = list.find(',', start);
    if (comma == std::string::npos) comma = list.size();
    if (comma > start) out.push_back(list.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

HttpApiReply add_target(ApiView& server, const HttpRequest& req) {
  RuntimeTarget t;
  t.app = query_param(req.query, "app").value_or("");
  t.url = query_param(req.query, "url").value_or("");
  t.key = query_param(req.query, "key").value_or("");
  t.streams = split_names(query_param(req.query, "streams").value_or(""));
  const config::AppConfig* app = server.config().find_app(t.app);
  if (!app || app->type != config::AppType::Live) return error_reply(404, "no such live app: " + t.app);
  if (std::string why = config::relay_url_problem(t.url); !why.empty()) return error_reply(400, "url " + why);
  const std::string id = RuntimeTargets::instance().add(t);
  if (id.empty()) {
    return error_reply(409, "at most " + std::to_string(RuntimeTargets::kMaxTargets) + " push targets through the API");
  }
  return json_reply(
      201, json{{"id", id}, {"app", t.app}, {"url", RelayUrl::parse(t.url)->display()}, {"streams", t.streams}});
}

}  // namespace

json all_relays(ApiView& server) {
  json out = server.relays().status();
  if (WorkerMesh* mesh = server.mesh()) {
    for (const auto& shared : mesh->snapshots(server.worker())) {
      const json& snap = *shared;
      if (!snap.contains("relays")) continue;
      for (const char* kind : {"push", "pull"}) {
        for (const json& r : snap["relays"][kind]) out[kind].push_back(r);
      }
    }
  }
  json runtime = json::array();
  for (const RuntimeTarget& t : RuntimeTargets::instance().list()) {
    auto url = RelayUrl::parse(t.url);
    runtime.push_back({{"id", t.id}, {"app", t.app}, {"url", url ? url->display() : ""}, {"streams", t.streams}});
  }
  out["runtime_targets"] = runtime;
  return out;
}

HttpApiReply relays_api(ApiView& server, const HttpRequest& req, const std::string& path) {
  if (path == "/api/v1/relays") {
    if (req.method != "GET" && req.method != "HEAD") return error_reply(405, "use GET");
    return json_reply(200, all_relays(server));
  }
  if (path == kPush) {
    if (req.method != "POST") return error_reply(405, "use POST to add a push target");
    return add_target(server, req);
  }
  if (path.starts_with(std::string(kPush) + "/")) {
    if (req.method != "DELETE") return error_reply(405, "use DELETE to remove a push target");
    const std::string id = path.substr(kPush.size() + 1);
    if (!RuntimeTargets::instance().remove(id))
      return error_reply(404, "no push target " + id + " added through the API");
    HttpApiReply r;
    r.status = 204;
    return r;
  }
  return error_reply(404, "no such relay resource (see docs/relays.md)");
}

void relay_metrics(ApiView& server, std::string& m) {
  json all = all_relays(server);
  std::map<std::string, double> push_states{{"connecting", 0}, {"live", 0}, {"waiting", 0}, {"stopped", 0}};
  std::map<std::string, double> pull_states{{"connecting", 0}, {"live", 0}, {"waiting", 0}, {"ended", 0}};
  double push_bytes = 0, pull_bytes = 0, push_connects = 0, pull_connects = 0;
  for (const json& r : all["push"]) {
    push_states[r["state"].get<std::string>()] += 1;
    push_bytes += r["bytes_out"].get<double>();
    push_connects += r["connects"].get<double>();
  }
  for (const json& r : all["pull"]) {
    pull_states[r["state"].get<std::string>()] += 1;
    pull_bytes += r["bytes_in"].get<double>();
    pull_connects += r["connects"].get<double>();
  }
  char buf[64];
  auto line = [&](const std::string& series, double v) {
    std::snprintf(buf, sizeof buf, " %.15g\n", v);
    m += series + buf;
  };
  m += "# HELP sluice_relay_push_targets Push targets of the live streams, by state.\n# TYPE sluice_relay_push_targets "
       "gauge\n";
  for (const auto& [state, n] : push_states) line("sluice_relay_push_targets{state=\"" + state + "\"}", n);
  m += "# HELP sluice_relay_pulls Pulls from upstream servers, by state.\n# TYPE sluice_relay_pulls gauge\n";
  for (const auto& [state, n] : pull_states) line("sluice_relay_pulls{state=\"" + state + "\"}", n);
  m += "# HELP sluice_relay_bytes Bytes the current relays sent (push) and received (pull).\n# TYPE sluice_relay_bytes "
       "gauge\n";
  line("sluice_relay_bytes{direction=\"push\"}", push_bytes);
  line("sluice_relay_bytes{direction=\"pull\"}", pull_bytes);
  m += "# HELP sluice_relay_connects Connection attempts of the current relays.\n# TYPE sluice_relay_connects gauge\n";
  line("sluice_relay_connects{direction=\"push\"}", push_connects);
  line("sluice_relay_connects{direction=\"pull\"}", pull_connects);
}

}  // namespace sluice::server
