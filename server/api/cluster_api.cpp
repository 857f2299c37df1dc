#include "server/api/cluster_api.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "server/cluster/cluster_service.hpp"
#include "server/api/api_view.hpp"

namespace sluice::server {

using nlohmann::json;

json cluster_loop_json(ApiView& server) {
  cluster::ClusterService* c = server.cluster();
  if (c == nullptr) return nullptr;
  return json{{"connected", c->client().connected()},
              {"rtt_ms", c->client().rtt_ms()},
              {"reconnects", c->client().reconnects()},
              {"owned", c->book().owned()}};
}

json cluster_json(ApiView& server, const json& loops) {
  cluster::ClusterService* c = server.cluster();
  if (c == nullptr) return nullptr;
  const config::ClusterConfig& cfg = c->config();
  bool connected = true;
  double rtt = -1;
  std::vector<std::string> owned;
  for (const json& loop : loops) {
    if (!loop.is_object()) continue;
    connected = connected && loop.value("connected", false);
    rtt = std::max(rtt, loop.value("rtt_ms", -1.0));
    for (const json& s : loop.value("owned", json::array())) owned.push_back(s.get<std::string>());
  }
  std::sort(owned.begin(), owned.end());
  json advertise{{"rtmp", cfg.advertise_rtmp}};
  if (!cfg.advertise_http.empty()) advertise["http"] = cfg.advertise_http;
  return json{{"node_id", cfg.node_id}, {"registry", cfg.registry->display()},
              {"advertise", advertise}, {"lease_ms", cfg.lease.count()},
              {"connected", connected}, {"rtt_ms", rtt},
              {"owned", owned}};
}

json cluster_view_json(ApiView& server) {
  cluster::ClusterService* c = server.cluster();
  if (c == nullptr) return nullptr;
  const cluster::ClusterView& v = c->view();
  json nodes = json::array();
  for (const auto& n : v.nodes) {
    json record = json::parse(n.record, nullptr, false);
    if (!record.is_object()) record = json::object();
    record["node_id"] = n.id;
    record["self"] = n.id == c->config().node_id;
    nodes.push_back(std::move(record));
  }
  json streams = json::array();
  for (const auto& s : v.streams) streams.push_back({{"name", s.name}, {"owner", s.owner}});
  return json{{"node_id", c->config().node_id}, {"read_at_ms", v.read_at_ms}, {"nodes", nodes}, {"streams", streams}};
}

}  // namespace sluice::server
