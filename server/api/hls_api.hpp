// HLS figures of the stats API and /metrics (docs/http.md, docs/hls.md): per stream, what its
// muxer holds and serves and how many viewers watch it; for the server, totals since start.
// Part of the API wing, like stats_api.cpp: it reads the HlsDirectory every loop shares
// and the viewer sessions of the HTTP side.
#pragma once

#include <map>
#include <string>

#include <nlohmann/json.hpp>

namespace sluice::server {

class HttpService;
class ApiView;

// Adds "hls" to each stream of `streams` (keyed "app/name"): null when no muxer runs for it.
void add_hls_streams(ApiView& server, HttpService& http, std::map<std::string, nlohmann::json>& streams);
// {"muxers", "viewers", "requests", "bytes_out", "bytes_held", "muxers_started"} for /api/v1/server.
nlohmann::json hls_server_json(ApiView& server, HttpService& http);
// The HLS series of /metrics, appended to m.
void hls_metrics(ApiView& server, HttpService& http, std::string& m);

}  // namespace sluice::server
