// ApiResponder: /api/v1/... and /metrics, the stats API (server/http/api.hpp lists the routes),
// for the addresses http.api.allow lets in (403 for the others); and the probes /healthz and
// /readyz, open to every address and without a token (load balancers and Kubernetes ask them; they
// tell nothing but ready or not), logged at debug like other routine requests. The answer comes from the
// composition root through HttpApi, whole, while this connection is dispatched: the clients list
// shows it with the activity "request". On a loop other than worker 0's the request goes to
// worker 0 (HttpService::ask_api) and the answer comes back a moment later (answered()).
#pragma once

#include <memory>

#include "server/http/api.hpp"
#include "server/http/responder.hpp"

namespace sluice::server {

class HttpConnection;
class LoopContext;

class ApiResponder final : public HttpResponder {
 public:
  explicit ApiResponder(HttpConnection& conn) : conn_(conn) {}

  const char* activity() const override { return "request"; }
  bool routine() const override { return probe_; }
  void start();
  // Worker 0's answer to the request this responder sent there.
  void answered(const ApiCall& call);
  void close() override;

 private:
  void send(const HttpApiReply& r);

  HttpConnection& conn_;
  bool probe_ = false;
  std::shared_ptr<ApiCall> call_;  // while worker 0 answers
};

// The answer to an API request, as worker 0 gives it to a request of its own loop or of another:
// GET /api/v1/streams asked several times in one loop iteration is built once (see the .cpp) and
// returned as that shared answer; any other answer is built into `scratch`, which is returned.
const HttpApiReply& http_api_answer(HttpApi& api, LoopContext& ctx, const HttpRequest& req, uint64_t self_id,
                                    HttpApiReply& scratch);

}  // namespace sluice::server
