// The stats API and Prometheus metrics, answered from the server's live state on the loop:
//   GET    /api/v1/server              version, uptime, connections, bytes, requests
//   GET    /api/v1/streams             every stream: codecs, publisher, players, rates, GOP cache
//   GET    /api/v1/streams/{app}/{s}   one stream
//   GET    /api/v1/clients             every RTMP and HTTP connection
//   DELETE /api/v1/clients/{id}        closes that connection
//   GET    /metrics                    Prometheus text format 0.0.4
// Access control (http.api.allow) is the caller's job; this only builds answers.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

#include "server/http/request.hpp"

namespace sluice::server {

class Server;
class HttpService;

struct HttpApiReply {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::string headers;  // extra "Name: value\r\n" lines
};

// `self_id` is the asking connection: it may not close itself through the API (409).
HttpApiReply http_api_reply(Server& server, HttpService& http, const HttpRequest& req, uint64_t self_id);

// One worker's streams, clients and byte counts as JSON, for the API served by another worker.
nlohmann::json worker_snapshot(Server& server);

}  // namespace sluice::server
