// ApiResponder: /api/v1/... and /metrics, the stats API (server/http/api.hpp lists the routes),
// for the addresses http.api.allow lets in (403 for the others); and the probes /healthz and
// /readyz, open to every address and without a token (load balancers and Kubernetes ask them; they
// tell nothing but ready or not), logged at debug like other routine requests. The answer comes from the
// composition root through HttpApi, whole, while this connection is dispatched: the clients list
// shows it with the activity "request".
#pragma once

#include "server/http/responder.hpp"

namespace sluice::server {

class HttpConnection;

class ApiResponder final : public HttpResponder {
 public:
  explicit ApiResponder(HttpConnection& conn) : conn_(conn) {}

  const char* activity() const override { return "request"; }
  bool routine() const override { return probe_; }
  void start();

 private:
  HttpConnection& conn_;
  bool probe_ = false;
};

}  // namespace sluice::server
