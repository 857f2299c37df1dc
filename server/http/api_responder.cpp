#include "server/http/api_responder.hpp"

#include <string>
#include <utility>

#include "base/bytes.hpp"
#include "server/access/token.hpp"
#include "server/http/api.hpp"
#include "server/http/connection.hpp"
#include "server/http/service.hpp"
#include "server/io/logging.hpp"
#include "server/io/loop_context.hpp"

namespace sluice::server {

namespace {

// GET /api/v1/streams, answered once per loop iteration. Building and serialising the list costs
// about 10 µs per stream (nlohmann::json: maps of strings, then escaping every character), paid
// again for every poller; but nothing a client can see happens between two requests read in the
// same iteration (answers, this one included, go out at its end, in the FlushScheduler's drain),
// so the requests of one iteration may share one answer. The drain that sends them drops it (this
// is a Flushable only for that call). Per thread: one loop runs on a thread at a time.
class IterationAnswer final : public Flushable {
 public:
  const HttpApiReply* find(LoopContext& ctx, const std::string& target) const {
    if (!in_flush_list || ctx_ != &ctx || now_ms_ != ctx.now_ms() || target != target_) return nullptr;
    return &reply_;
  }
  const HttpApiReply& keep(LoopContext& ctx, std::string target, HttpApiReply reply) {
    // Still listed only if a loop ended without its last drain (tests run loops one after another).
    if (in_flush_list && ctx_ != &ctx) in_flush_list = false;
    ctx_ = &ctx;
    now_ms_ = ctx.now_ms();
    target_ = std::move(target);
    reply_ = std::move(reply);
    body_ = Slice::copy_of(reply_.body);
    ctx.flush().flush_soon(this);
    return reply_;
  }
  // The body of `r` as one shared buffer when r is this iteration's answer: the requests that
  // share it queue that buffer instead of copying the body twice each (16 KB for 20 streams, and
  // those copies with their allocations were a third of the profile).
  const Slice* body_of(const HttpApiReply& r) const { return &r == &reply_ && ctx_ ? &body_ : nullptr; }
  void flush() override {
    ctx_ = nullptr;
    target_.clear();
    reply_ = HttpApiReply{};
    body_.reset();
  }
  void close(const std::string&) override { flush(); }

 private:
  LoopContext* ctx_ = nullptr;
  uint64_t now_ms_ = 0;
  std::string target_;
  HttpApiReply reply_;
  Slice body_;
};

thread_local IterationAnswer iteration_answer;

bool shared_per_iteration(const HttpRequest& req) { return req.method == "GET" && req.path == "/api/v1/streams"; }

}  // namespace

void ApiResponder::start() {
  const HttpRequest& req = conn_.request();
  probe_ = req.path == "/healthz" || req.path == "/readyz";
  if (!probe_) {
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
        return conn_.send_error(presented.empty() ? 401 : 403,
                                presented.empty() ? "the API needs a token (Authorization: Bearer ...)" : "wrong token",
                                false, "WWW-Authenticate: Bearer realm=\"sluice\"\r\n");
      }
    }
  }
  HttpService& service = conn_.service();
  call_ = std::make_shared<ApiCall>();
  call_->request = req;
  call_->conn_id = conn_.id();
  call_->from = conn_.loop_context().worker();
  if (service.api_elsewhere()) return service.ask_api(call_, this);
  if (service.answer_later(call_, this)) return;
  call_.reset();
  HttpApiReply scratch;
  send(http_api_answer(service.api(), conn_.loop_context(), req, conn_.id(), scratch));
}

void ApiResponder::answered(const ApiCall& call) {
  call_.reset();
  send(call.reply);
}

void ApiResponder::close() {
  if (call_) conn_.service().stop_waiting(std::exchange(call_, nullptr).get());
}

void ApiResponder::send(const HttpApiReply& r) {
  const std::string& method = conn_.request().method;
  if (probe_) {
    return conn_.send_simple(r.status, r.content_type, method == "HEAD" ? std::string() : r.body,
                             r.headers + "Cache-Control: no-store\r\n");
  }
  // Not cacheable, and no CORS header: a web page on another origin must not read the server's state.
  const std::string headers = r.headers + "Cache-Control: no-store\r\n";
  if (const Slice* shared = iteration_answer.body_of(r)) {
    return conn_.send_shared(r.status, r.content_type, *shared, headers);
  }
  conn_.send_simple(r.status, r.status == 204 ? std::string() : r.content_type, r.body, headers);
}

const HttpApiReply& http_api_answer(HttpApi& api, LoopContext& ctx, const HttpRequest& req, uint64_t self_id,
                                    HttpApiReply& scratch) {
  if (!shared_per_iteration(req)) return scratch = api.reply(req, self_id);
  if (const HttpApiReply* kept = iteration_answer.find(ctx, req.target)) return *kept;
  return iteration_answer.keep(ctx, req.target, api.reply(req, self_id));
}

}  // namespace sluice::server
