#include "server/cluster/registry_client.hpp"

#include <hiredis/async.h>
#include <hiredis/hiredis.h>

#include <memory>
#include <string_view>

#include "server/cluster/hiredis_uv.hpp"
#include "server/io/logging.hpp"
#include "server/io/uv_handle.hpp"

namespace sluice::server::cluster {

namespace {

constexpr uint64_t kPingMs = 5000;
// A connect that has not finished by then (a Redis host that drops the SYN) is given up and retried;
// a refused connect is reported at once (server/cluster/hiredis_uv.hpp).
constexpr uint64_t kConnectTimeoutMs = 1500;

RegistryReply convert(const redisReply* r) {
  RegistryReply out;
  switch (r->type) {
    case REDIS_REPLY_STATUS:
      out.type = RegistryReply::Type::Status;
      out.str.assign(r->str, r->len);
      break;
    case REDIS_REPLY_STRING:
      out.type = RegistryReply::Type::String;
      out.str.assign(r->str, r->len);
      break;
    case REDIS_REPLY_ERROR:
      out.type = RegistryReply::Type::Error;
      out.str.assign(r->str, r->len);
      break;
    case REDIS_REPLY_INTEGER:
      out.type = RegistryReply::Type::Integer;
      out.integer = r->integer;
      break;
    case REDIS_REPLY_ARRAY:
      out.type = RegistryReply::Type::Array;
      for (size_t i = 0; i < r->elements; ++i) out.elements.push_back(convert(r->element[i]));
      break;
    default: out.type = RegistryReply::Type::Nil;
  }
  return out;
}

}  // namespace

struct RegistryClient::Pending {
  Done done;
};

RegistryClient::RegistryClient(uv_loop_t* loop, const config::ClusterConfig& config, std::string who)
    : loop_(loop), config_(config), who_(std::move(who)) {}

RegistryClient::~RegistryClient() {
  stop();
  force_close();
}

void RegistryClient::listen(std::string channel, std::function<void(const std::string&)> on_message) {
  channel_ = std::move(channel);
  on_message_ = std::move(on_message);
}

void RegistryClient::start(OnState on_state) {
  on_state_ = std::move(on_state);
  uv_timer_init(loop_, &retry_timer_);
  retry_timer_.data = this;
  uv_timer_init(loop_, &ping_timer_);
  ping_timer_.data = this;
  timers_open_ = true;
  uv_timer_start(
      &ping_timer_, [](uv_timer_t* t) { static_cast<RegistryClient*>(t->data)->ping(); }, kPingMs, kPingMs);
  connect();
}

// What is queued still goes out (a stopping node's releases) and its answers are awaited, but a
// Redis that does not answer holds the stop for half a second at most.
void RegistryClient::stop() {
  if (stopping_) return;
  stopping_ = true;
  ready_ = false;
  if (ctx_ == nullptr || !timers_open_) return force_close();
  redisAsyncDisconnect(ctx_);
  uv_timer_stop(&ping_timer_);
  uv_timer_start(
      &retry_timer_, [](uv_timer_t* t) { static_cast<RegistryClient*>(t->data)->force_close(); }, 500, 0);
}

void RegistryClient::force_close() {
  if (ctx_ != nullptr) {
    redisAsyncContext* c = ctx_;
    ctx_ = nullptr;
    c->data = nullptr;
    redisAsyncFree(c);  // what is still pending is answered with nullopt now
  }
  if (timers_open_) {
    close_handle(&retry_timer_);
    close_handle(&ping_timer_);
    timers_open_ = false;
  }
}

void RegistryClient::connect() {
  if (stopping_) return;
  const config::RedisUrl& url = *config_.registry;
  ctx_ = redisAsyncConnect(url.host.c_str(), url.port);
  if (ctx_ == nullptr || ctx_->err != 0) {
    const std::string why = ctx_ ? ctx_->errstr : "out of memory";
    if (ctx_ != nullptr) redisAsyncFree(ctx_);
    ctx_ = nullptr;
    return lost(why);
  }
  ctx_->data = this;
  if (!attach_to_loop(ctx_, loop_)) {
    redisAsyncFree(ctx_);
    ctx_ = nullptr;
    return lost("cannot watch the socket");
  }
  redisAsyncSetConnectCallback(ctx_, &RegistryClient::on_connect);
  redisAsyncSetDisconnectCallback(ctx_, &RegistryClient::on_disconnect);
  uv_timer_start(
      &retry_timer_,
      [](uv_timer_t* t) {
        auto* self = static_cast<RegistryClient*>(t->data);
        if (self->ctx_ == nullptr || self->ready_ || self->stopping_) return;
        redisAsyncContext* c = self->ctx_;
        self->ctx_ = nullptr;
        c->data = nullptr;
        redisAsyncFree(c);
        self->lost("no answer to the connection within " + std::to_string(kConnectTimeoutMs) + " ms");
      },
      kConnectTimeoutMs, 0);
}

void RegistryClient::on_connect(const redisAsyncContext* c, int status) {
  auto* self = static_cast<RegistryClient*>(c->data);
  if (self == nullptr) return;
  uv_timer_stop(&self->retry_timer_);  // the connect timeout
  if (status != REDIS_OK) {
    // hiredis frees the context after a failed connect.
    self->ctx_ = nullptr;
    return self->lost(c->errstr);
  }
  // AUTH and SELECT first; the client is ready when the last of them answers OK.
  std::vector<std::vector<std::string>> setup;
  if (!self->config_.password.value.empty()) {
    if (self->config_.registry->user.empty()) {
      setup.push_back({"AUTH", self->config_.password.value});
    } else {
      setup.push_back({"AUTH", self->config_.registry->user, self->config_.password.value});
    }
  }
  if (self->config_.registry->db != 0) setup.push_back({"SELECT", std::to_string(self->config_.registry->db)});
  setup.push_back({"PING"});
  const size_t n = setup.size();
  auto failed = std::make_shared<bool>(false);
  for (size_t i = 0; i < n; ++i) {
    const std::string what = setup[i][0];
    const uint64_t t0 = uv_hrtime();
    self->raw_send(setup[i], [self, what, failed, last = i + 1 == n, t0](std::optional<RegistryReply> r) {
      if (*failed || self->stopping_) return;
      if (!r || r->type == RegistryReply::Type::Error) {
        *failed = true;
        const std::string why = r ? what + " refused: " + r->str : what + " got no answer";
        SLUICE_LOG_ERROR("{} proto=cluster event=registry_refused registry={} reason=\"{}\"", self->who_,
                         self->config_.registry->display(), why);
        if (self->ctx_ != nullptr) redisAsyncDisconnect(self->ctx_);
        return;
      }
      if (!last) return;
      self->rtt_ms_ = double(uv_hrtime() - t0) / 1e6;
      self->ready_ = true;
      if (self->reconnects_ > 0 || self->backoff_.failures() > 0) {
        SLUICE_LOG_INFO("{} proto=cluster event=registry_connected registry={}", self->who_,
                        self->config_.registry->display());
      }
      self->backoff_.reset();
      if (!self->channel_.empty()) self->subscribe();
      if (self->on_state_) self->on_state_(true);
    });
  }
}

void RegistryClient::on_disconnect(const redisAsyncContext* c, int status) {
  auto* self = static_cast<RegistryClient*>(c->data);
  if (self == nullptr) return;
  self->ctx_ = nullptr;  // hiredis frees it after this callback
  if (self->stopping_) return self->force_close();
  const bool was_ready = self->ready_;
  self->ready_ = false;
  ++self->reconnects_;
  if (was_ready && self->on_state_) self->on_state_(false);
  self->lost(status == REDIS_OK ? "closed" : (c->errstr[0] != '\0' ? c->errstr : "connection lost"));
}

void RegistryClient::lost(const std::string& why) {
  if (stopping_ || !timers_open_ || uv_is_active(as_handle(&retry_timer_))) return;
  const uint64_t delay = backoff_.next_delay_ms();
  SLUICE_LOG_WARN("{} proto=cluster event=registry_unreachable registry={} reason=\"{}\" retry_in_ms={}", who_,
                  config_.registry->display(), why, delay);
  uv_timer_start(
      &retry_timer_, [](uv_timer_t* t) { static_cast<RegistryClient*>(t->data)->connect(); }, delay, 0);
}

void RegistryClient::ping() {
  if (!ready_ || !channel_.empty()) return;
  const uint64_t t0 = uv_hrtime();
  raw_send({"PING"}, [this, t0](std::optional<RegistryReply> r) {
    if (r && r->type != RegistryReply::Type::Error) rtt_ms_ = double(uv_hrtime() - t0) / 1e6;
  });
}

void RegistryClient::send(const RegistryCommand& command, Done done) {
  if (!ready_) {
    if (done) done(std::nullopt);
    return;
  }
  raw_send(command.argv, std::move(done));
}

void RegistryClient::raw_send(const std::vector<std::string>& argv, Done done) {
  if (ctx_ == nullptr) {
    if (done) done(std::nullopt);
    return;
  }
  std::vector<const char*> args;
  std::vector<size_t> lens;
  for (const std::string& a : argv) {
    args.push_back(a.data());
    lens.push_back(a.size());
  }
  auto* p = new Pending{std::move(done)};
  if (redisAsyncCommandArgv(ctx_, &RegistryClient::on_reply, p, int(args.size()), args.data(), lens.data()) !=
      REDIS_OK) {
    std::unique_ptr<Pending> own(p);
    if (own->done) own->done(std::nullopt);
  }
}

void RegistryClient::on_reply(redisAsyncContext*, void* reply, void* privdata) {
  std::unique_ptr<Pending> p(static_cast<Pending*>(privdata));
  if (!p->done) return;
  if (reply == nullptr) return p->done(std::nullopt);
  p->done(convert(static_cast<const redisReply*>(reply)));
}

// hiredis keeps the callback for the channel and calls it for every message, with this client as
// privdata (which outlives the context: force_close frees it first), and with no reply when the
// context goes.
void RegistryClient::subscribe() {
  const char* args[] = {"SUBSCRIBE", channel_.data()};
  const size_t lens[] = {9, channel_.size()};
  redisAsyncCommandArgv(ctx_, &RegistryClient::on_message, this, 2, args, lens);
}

void RegistryClient::on_message(redisAsyncContext*, void* reply, void* privdata) {
  auto* self = static_cast<RegistryClient*>(privdata);
  const auto* r = static_cast<const redisReply*>(reply);
  // ["message", channel, payload]; the answer to SUBSCRIBE is ["subscribe", channel, count].
  if (r == nullptr || r->type != REDIS_REPLY_ARRAY || r->elements != 3) return;
  const redisReply* kind = r->element[0];
  const redisReply* payload = r->element[2];
  if (kind->type != REDIS_REPLY_STRING || std::string_view(kind->str, kind->len) != "message") return;
  if (payload->type != REDIS_REPLY_STRING || !self->on_message_) return;
  self->on_message_(std::string(payload->str, payload->len));
}

}  // namespace sluice::server::cluster
