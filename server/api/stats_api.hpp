// The stats API's answers (server/http/api.hpp lists the routes), built on a worker loop from the
// whole server's state: every wing's connections and streams, and the other workers' snapshots.
// It reads the loop through ApiView (api_view.hpp) and sees every wing below; only the
// composition root includes it.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <string>

#include "server/http/api.hpp"

namespace sluice::server {

class ApiView;
class HttpService;

HttpApiReply http_api_reply(ApiView& server, HttpService& http, const HttpRequest& req, uint64_t self_id);

// One worker's streams and figures as JSON, for the API served by another worker, and its
// clients (the rows of /api/v1/clients), published apart (WorkerMesh::publish_clients).
nlohmann::json worker_snapshot(ApiView& server);
// Every loop's streams, merged (the publisher's loop tells the figures, players add up), by key:
// what GET /api/v1/streams lists.
std::map<std::string, nlohmann::json> merged_streams(ApiView& server);
nlohmann::json worker_clients(ApiView& server);

}  // namespace sluice::server
