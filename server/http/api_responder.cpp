#include "server/http/api_responder.hpp"

#include <string>

#include "server/access/token.hpp"
#include "server/http/api.hpp"
#include "server/http/connection.hpp"
#include "server/http/service.hpp"
#include "server/io/logging.hpp"

namespace sluice::server {

void ApiResponder::start() {
  const HttpRequest& req = conn_.request();
  probe_ = req.path == "/healthz" || req.path == "/readyz";
  if (probe_) {
    HttpApiReply r = conn_.service().api().reply(req, conn_.id());
    return conn_.send_simple(r.status, r.content_type, req.method == "HEAD" ? std::string() : r.body,
                             r.headers + "Cache-Control: no-store\r\n");
  }
  if (!config::cidr_list_allows(conn_.loop_context().config().http.api.allow, conn_.peer_address())) {
    SLUICE_LOG_INFO("conn={} proto=http peer={} event=api_refused path=\"{}\"", conn_.id(), conn_.peer(), req.path);
    return conn_.send_error(403, "the API is not open to this address (http.api.allow)");
  }
  // With http.api.token, the address alone is not enough (kicking clients changes things).
  const config::Secret& token = conn_.loop_context().config().http.api.token;
  if (!token.value.empty()) {
    std::string presented = bearer_token(req.header("authorization"));
    if (presented.empty() || !token_equal(presented, token.value)) {
      SLUICE_LOG_INFO("conn={} proto=http peer={} event=api_refused path=\"{}\" reason=\"{} token\"", conn_.id(),
                      conn_.peer(), req.path, presented.empty() ? "no" : "wrong");
      return conn_.send_error(presented.empty() ? 401 : 403, presented.empty() ? "the API needs a token (Authorization: Bearer ...)" : "wrong token", false,
                              "WWW-Authenticate: Bearer realm=\"sluice\"\r\n");
    }
  }
  HttpApiReply r = conn_.service().api().reply(req, conn_.id());
  // Not cacheable, and no CORS header: a web page on another origin must not read the server's state.
  conn_.send_simple(r.status, r.status == 204 ? std::string() : r.content_type, r.body,
                    r.headers + "Cache-Control: no-store\r\n");
}

}  // namespace sluice::server
