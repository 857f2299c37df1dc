// Cluster figures of the stats API (docs/cluster.md, docs/http.md): each loop's registry
// connection and the streams it owns, merged into one "cluster" object of /api/v1/server. Part of
// the API wing (server/api/), like stats_api.cpp.
#pragma once

#include <nlohmann/json.hpp>

namespace sluice::server {

class ApiView;

// This loop's part: null on a single node, else {connected, rtt_ms, reconnects, owned}.
nlohmann::json cluster_loop_json(ApiView& server);
// The node's: null on a single node, else {node_id, registry, advertise, lease_ms, connected (every
// loop's connection up), rtt_ms (the slowest loop's), owned (every loop's streams, sorted)}.
nlohmann::json cluster_json(ApiView& server, const nlohmann::json& loops);
// GET /api/v1/cluster: the nodes alive and which owns what, as last read from the registry (every
// third of a lease); null on a single node.
nlohmann::json cluster_view_json(ApiView& server);

}  // namespace sluice::server
