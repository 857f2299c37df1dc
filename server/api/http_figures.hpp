// The HTTP side's figures for the stats API, over every worker loop (each serves HTTP, docs/http.md
// "HTTP on every loop"): a loop other than worker 0's puts its own into its snapshot
// (http_loop_json, http_clients_json), worker 0 adds them to its live ones (http_totals).
// Part of the API wing, like stats_api.cpp.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <string>

namespace sluice::server {

class HttpService;
class ApiView;

struct HttpTotals {
  uint64_t bytes_in = 0;  // closed and open connections
  uint64_t bytes_out = 0;
  uint64_t requests = 0;
  size_t busy = 0;  // connections answering a request (an idle keep-alive one is not)
  std::map<std::string, size_t, std::less<>> flv_readers;  // HTTP-FLV readers per stream key
};

// One loop's figures, as HttpTotals (`http` may be null: no HTTP side).
HttpTotals http_loop_totals(const HttpService* http);
// The same as JSON, for the loop's snapshot.
nlohmann::json http_loop_json(const HttpService& http);
// Every loop's: `http`'s live figures and the other workers' snapshots.
HttpTotals http_totals(ApiView& server, const HttpService* http);

// The loop's HTTP connections as rows of /api/v1/clients.
void add_http_clients(const HttpService& http, uint64_t now_ms, uint32_t worker, nlohmann::json& rows);

}  // namespace sluice::server
