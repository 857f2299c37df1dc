#include "server/http/service.hpp"

#include <http_parser.h>

#include <algorithm>

#include "server/http/api_responder.hpp"
#include "server/http/connection.hpp"
#include "server/io/logging.hpp"
#include "server/io/net_address.hpp"
#include "server/io/uv_handle.hpp"

namespace sluice::server {

namespace {
constexpr uint64_t kTickMs = 1000;
}  // namespace

HttpService::HttpService(LoopContext& loop, StreamRegistry& registry, AccessGate& gate, HttpApi& api,
                         std::function<size_t()> other_connections, HttpShared* shared)
    : loop_(loop),
      registry_(registry),
      gate_(gate),
      api_(api),
      snapshots_(loop, registry),
      own_shared_(shared ? nullptr : std::make_unique<HttpShared>()),
      shared_(shared ? shared : own_shared_.get()),
      other_connections_(std::move(other_connections)),
      listeners_([this](bool tls) {
        return std::make_unique<TcpListener>(
            loop_.loop(), tls ? "https" : "http", loop_.config().rtmp.limits.accepts_per_iteration,
            [this, tls](int fd, const sockaddr_storage& peer) { on_accepted(fd, tls, peer); });
      }) {}

// This loop's HLS viewers end with it (their tickets are its gate's).
HttpService::~HttpService() { shared_->hls_sessions.drop(loop_.worker(), loop_.now_ms()); }

namespace {

// The addresses a configuration has the HTTP side listen on.
std::vector<ListenerSet::Address> http_addresses(const config::Config& c) {
  std::vector<ListenerSet::Address> out;
  for (const auto& a : c.http.listen) out.push_back({a, false});
  for (const auto& a : c.https.listen) out.push_back({a, true});
  return out;
}

TcpListener::Sharing first_sharing(bool grouped) {
  return grouped ? TcpListener::Sharing::FirstOfGroup : TcpListener::Sharing::Alone;
}

}  // namespace

Result<void> HttpService::start(bool grouped) {
  if (auto r = start_timer_and_tls(); !r) return r;
  return listeners_.open_missing(http_addresses(loop_.config()), first_sharing(grouped), bound_);
}

Result<void> HttpService::join(const HttpService& first) {
  if (auto r = start_timer_and_tls(); !r) return r;
  return listeners_.open_missing(first.listeners_.bound(), TcpListener::Sharing::JoinGroup, bound_);
}

Result<void> HttpService::open_listeners(const config::Config& next, bool grouped, std::vector<std::string>& bound) {
  if (auto r = listeners_.open_missing(http_addresses(next), first_sharing(grouped), bound); !r) return r;
  bound_.insert(bound_.end(), bound.begin(), bound.end());
  return ok();
}

void HttpService::close_unlisted_listeners(const config::Config& next) {
  listeners_.close_unlisted(http_addresses(next));
}

void HttpService::follow_listeners(const std::vector<ListenerSet::Address>& group) {
  std::vector<std::string> bound;
  // Worker 0's socket of each group is bound already: a join fails only when the system is out of
  // descriptors, and then this loop serves the address no more (worker 0 and the others still do).
  if (auto r = listeners_.open_missing(group, TcpListener::Sharing::JoinGroup, bound); !r) {
    SLUICE_LOG_ERROR("worker={} event=listener_join_failed error=\"{}\"", loop_.worker(), r.error().message());
  }
  listeners_.close_unlisted(group);
}

Result<void> HttpService::start_timer_and_tls() {
  // The parser's own header limit is process-wide; ours (per request, with a 431 answer) is lower.
  http_parser_set_max_header_size(static_cast<uint32_t>(HttpConnection::kMaxHeaderBytes * 2));
  uv_timer_init(loop_.loop(), &tick_);
  tick_.data = this;
  uv_timer_start(&tick_, &HttpService::on_tick, kTickMs, kTickMs);
  handles_started_ = true;
  const config::RtmpsConfig& https = loop_.config().https;
  if (https.enabled()) {
    tls_ = std::make_unique<TlsReloader>(loop_.loop(), https.certificates, loop_.worker(), https.seal_records);
    if (auto r = tls_->start(); !r) return r.error();
  }
  const config::Config& cfg = loop_.config();
  if (cfg.http.proxy_protocol.enabled || cfg.https.proxy_protocol.enabled) {
    proxy_reader_ = std::make_unique<ProxyHeaderReader>(
        loop_.loop(), ProxyHeaderReader::timeout_for(cfg.rtmp.handshake_timeout),
        [this](int fd, uint64_t id, bool tls, PeerAddress peer) { open(fd, id, tls, std::move(peer)); });
  }
  return ok();
}

void HttpService::ask_api(std::shared_ptr<ApiCall> call, ApiResponder* waiting) {
  api_waiting_[call.get()] = waiting;
  forward_api_(std::move(call));
}

bool HttpService::answer_later(const std::shared_ptr<ApiCall>& call, ApiResponder* waiting) {
  api_waiting_[call.get()] = waiting;
  const bool later = api_.reply_later(call->request, [this, call](HttpApiReply reply) {
    call->reply = std::move(reply);
    api_answered(call);
  });
  if (!later) api_waiting_.erase(call.get());
  return later;
}

void HttpService::api_answered(const std::shared_ptr<ApiCall>& call) {
  auto it = api_waiting_.find(call.get());
  if (it == api_waiting_.end()) return;  // the connection closed meanwhile
  ApiResponder* waiting = it->second;
  api_waiting_.erase(it);
  waiting->answered(*call);
}

void HttpService::reload_tls(const char* why) {
  if (tls_) tls_->reload(why);
}

void HttpService::on_accepted(int fd, bool tls, const sockaddr_storage& peer) {
  const config::Config& cfg = loop_.config();
  const config::ProxyProtocolConfig& pp = tls ? cfg.https.proxy_protocol : cfg.http.proxy_protocol;
  // Sockets still waiting for their header count against the limit too (they hold descriptors);
  // over it, the connection opens at once and is answered 503 like any other.
  const uint32_t max = cfg.rtmp.max_connections;
  const size_t waiting = proxy_reader_ ? proxy_reader_->pending() : 0;
  if (pp.enabled && !stopping_ && !AdmissionPolicy::full(other_connections_() + total_connections() + waiting, max)) {
    proxy_reader_->start(fd, loop_.next_connection_id(), {tls ? "https" : "http", tls, pp.from});
    return;
  }
  // The address accept() gave: no getpeername for this connection.
  open(fd, loop_.next_connection_id(), tls, accepted_peer(peer));
}

void HttpService::open(int fd, uint64_t id, bool tls, std::optional<PeerAddress> peer) {
  auto* c = new HttpConnection(*this, id);
  connections_.insert(c);
  shared_->connections.fetch_add(1, std::memory_order_relaxed);
  if (!c->open_accepted(fd, tls && tls_ ? tls_->context() : nullptr, std::move(peer))) return;
  // One limit for the whole server: file descriptors and memory do not care about the protocol.
  // This connection is counted already (connections_), the limit is on the others.
  if (stopping_) {
    c->close("server is stopping");
  } else if (std::string refusal = admission_.over_limit(other_connections_() + total_connections() - 1,
                                                         loop_.config().rtmp.max_connections);
             !refusal.empty()) {
    c->reject_overloaded(refusal);
  } else if (const uint32_t per_ip = loop_.config().limits.per_ip; !c->take_peer_slot(per_ip)) {
    admission_.per_ip_refused(c->id(), c->peer(), per_ip, loop_.now_ms());
    c->reject_quietly(429, "too many connections from this address");
  }
}

HttpConnection* HttpService::find(uint64_t id) const {
  for (HttpConnection* c : connections_)
    if (c->id() == id) return c;
  return nullptr;
}

void HttpService::on_tick(uv_timer_t* timer) {
  auto* self = owner_of<HttpService>(timer);
  uint64_t now = self->loop_.now_ms();
  std::vector<HttpConnection*> all(self->connections_.begin(), self->connections_.end());
  for (HttpConnection* c : all) {
    if (self->connections_.count(c)) c->on_tick(now);
  }
  self->shared_->hls_sessions.tick(now, self->loop_.worker());
  self->snapshots_.tick(now);
  // One sweep a second is enough for the one cache every loop shares.
  if (self->loop_.worker() == 0) self->shared_->files.sweep(now);
}

void HttpService::on_connection_closed(HttpConnection* c) {
  if (connections_.erase(c)) {
    shared_->connections.fetch_sub(1, std::memory_order_relaxed);
    closed_bytes_in += c->bytes_in();
    closed_bytes_out += c->bytes_out();
  }
}

void HttpService::stop() {
  if (stopping_) return;
  stopping_ = true;
  snapshots_.stop();
  listeners_.close_all();
  if (proxy_reader_) proxy_reader_->close_all();
  std::vector<HttpConnection*> all(connections_.begin(), connections_.end());
  for (HttpConnection* c : all) {
    if (connections_.count(c)) c->shutdown_gracefully();
  }
}

void HttpService::close_all(const std::string& reason) {
  snapshots_.stop();  // the mirrors it holds go before the registry does
  std::vector<HttpConnection*> all(connections_.begin(), connections_.end());
  for (HttpConnection* c : all) {
    if (connections_.count(c)) c->close(reason);
  }
}

void HttpService::close_handles() {
  listeners_.close_all();
  if (tls_) tls_->close();
  if (!handles_started_) return;
  close_handle(&tick_);
}

}  // namespace sluice::server
