// The relays routes of the stats API (docs/relays.md, docs/http.md):
//   GET    /api/v1/relays                 every push target and pull of every worker, with its state
//   POST   /api/v1/relays/push?app=A&url=U[&key=K][&streams=a,b]
//                                         adds a push target to app A (its live streams and the ones
//                                         published later); 201 with the target's id
//   DELETE /api/v1/relays/push/<id>       removes a target added so (its pushes end cleanly)
// Targets added here last until the server stops. Part of the API wing, like stats_api.cpp.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "server/http/api.hpp"
#include "server/http/request.hpp"

namespace sluice::server {

class ApiView;

// path is percent-decoded and has no trailing '/'.
HttpApiReply relays_api(ApiView& server, const HttpRequest& req, const std::string& path);
// Every worker's relays, merged: {"push": [...], "pull": [...]}.
nlohmann::json all_relays(ApiView& server);
// The relay series of /metrics, appended to m.
void relay_metrics(ApiView& server, std::string& m);

}  // namespace sluice::server
