// The stats API and Prometheus metrics, as the HTTP side sees them: a request goes in, a reply
// comes out. The answers need the whole server's state (every wing's connections and streams), so
// the composition root implements this through the API wing (server/api/stats_api.hpp):
//   GET    /api/v1/server              version, uptime, connections, bytes, requests
//   GET    /api/v1/streams             every stream: codecs, publisher, players, rates, GOP cache
//   GET    /api/v1/streams/{app}/{s}   one stream
//   GET    /api/v1/clients             every RTMP and HTTP connection
//   DELETE /api/v1/clients/{id}        closes that connection
//   GET    /metrics                    Prometheus text format 0.0.4
// Access control (http.api.allow) is the caller's job; this only builds answers.
#pragma once

#include <functional>

#include <cstdint>
#include <string>

#include "server/http/request.hpp"

namespace sluice::server {

struct HttpApiReply {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::string headers;  // extra "Name: value\r\n" lines
};

// An API request asked on another worker loop than worker 0's, which answers every API request
// (docs/http.md, "HTTP on every loop"): the asking loop sends it over the WorkerMesh, worker 0
// fills `reply` and sends it back; `conn_id` finds the asking connection again (gone: dropped).
struct ApiCall {
  HttpRequest request;
  uint64_t conn_id = 0;
  uint32_t from = 0;
  HttpApiReply reply;
};

class HttpApi {
 public:
  // `self_id` is the asking connection: it may not close itself through the API (409).
  virtual HttpApiReply reply(const HttpRequest& req, uint64_t self_id) = 0;
  // A request whose answer waits for the other loops (POST /api/v1/config/reload answers once
  // every loop has the new configuration): true, and `done` is called with the answer on this
  // loop, later or at once; false: ask reply().
  virtual bool reply_later(const HttpRequest& req, std::function<void(HttpApiReply)> done) = 0;

 protected:
  ~HttpApi() = default;
};

}  // namespace sluice::server
