#include "server/http/service.hpp"

#include <http_parser.h>

#include <algorithm>

#include "server/http/connection.hpp"
#include "server/io/logging.hpp"
#include "server/io/uv_handle.hpp"

namespace sluice::server {

namespace {
constexpr uint64_t kTickMs = 1000;
}  // namespace

HttpService::HttpService(LoopContext& loop, StreamRegistry& registry, AccessGate& gate, HttpApi& api,
                         std::function<size_t()> other_connections)
    : loop_(loop), registry_(registry), gate_(gate), api_(api), other_connections_(std::move(other_connections)) {}

HttpService::~HttpService() = default;

Result<void> HttpService::start() {
  // The parser's own header limit is process-wide; ours (per request, with a 431 answer) is lower.
  http_parser_set_max_header_size(static_cast<uint32_t>(HttpConnection::kMaxHeaderBytes * 2));
  uv_timer_init(loop_.loop(), &tick_);
  tick_.data = this;
  uv_timer_start(&tick_, &HttpService::on_tick, kTickMs, kTickMs);
  handles_started_ = true;
  const config::RtmpsConfig& https = loop_.config().https;
  if (https.enabled()) {
    tls_ = std::make_unique<TlsReloader>(loop_.loop(), https.certificates, 0);
    if (auto r = tls_->start(); !r) return r.error();
  }
  const config::Config& cfg = loop_.config();
  if (cfg.http.proxy_protocol.enabled || cfg.https.proxy_protocol.enabled) {
    proxy_reader_ = std::make_unique<ProxyHeaderReader>(
        loop_.loop(), ProxyHeaderReader::timeout_for(cfg.rtmp.handshake_timeout),
        [this](int fd, uint64_t id, bool tls, PeerAddress peer) { open(fd, id, tls, std::move(peer)); });
  }
  auto add = [&](const config::ListenAddress& addr, bool tls) -> Result<void> {
    listeners_.push_back(std::make_unique<TcpListener>(loop_.loop(), tls ? "https" : "http",
                                                       loop_.config().rtmp.limits.accepts_per_iteration,
                                                       [this, tls](int fd) { on_accepted(fd, tls); }));
    auto r = listeners_.back()->listen(addr);
    if (!r) return r;
    bound_.push_back(listeners_.back()->bound_address());
    return ok();
  };
  for (const auto& addr : loop_.config().http.listen) {
    if (auto r = add(addr, false); !r) return r;
  }
  for (const auto& addr : https.listen) {
    if (auto r = add(addr, true); !r) return r;
  }
  return ok();
}

void HttpService::reload_tls(const char* why) {
  if (tls_) tls_->reload(why);
}

void HttpService::on_accepted(int fd, bool tls) {
  const config::Config& cfg = loop_.config();
  const config::ProxyProtocolConfig& pp = tls ? cfg.https.proxy_protocol : cfg.http.proxy_protocol;
  // Sockets still waiting for their header count against the limit too (they hold descriptors);
  // over it, the connection opens at once and is answered 503 like any other.
  const uint32_t max = cfg.rtmp.max_connections;
  const size_t waiting = proxy_reader_ ? proxy_reader_->pending() : 0;
  if (pp.enabled && !stopping_ && (max == 0 || other_connections_() + connections_.size() + waiting < max)) {
    proxy_reader_->start(fd, loop_.next_connection_id(), {tls ? "https" : "http", tls, pp.from});
    return;
  }
  open(fd, loop_.next_connection_id(), tls, std::nullopt);
}

void HttpService::open(int fd, uint64_t id, bool tls, std::optional<PeerAddress> peer) {
  auto* c = new HttpConnection(*this, id);
  connections_.insert(c);
  if (tls && tls_) c->use_tls(tls_->context());
  if (peer) c->use_peer(std::move(*peer));
  int rc = c->adopt(fd);
  if (rc != 0) {
    c->close(std::string("accept failed: ") + uv_strerror(rc));
    return;
  }
  // One limit for the whole server: file descriptors and memory do not care about the protocol.
  uint32_t max = loop_.config().rtmp.max_connections;
  if (stopping_) {
    c->close("server is stopping");
  } else if (max != 0 && other_connections_() + connections_.size() > max) {
    GuardCounters::bump(GuardEvent::ConnectionLimit);
    c->reject_overloaded("too many connections (limits.connections=" + std::to_string(max) + ")");
  } else if (const uint32_t per_ip = loop_.config().limits.per_ip; !c->take_peer_slot(per_ip)) {
    GuardCounters::bump(GuardEvent::PerIpLimit);
    uint64_t suppressed = 0;
    if (peer_limit_log_.allow(loop_.now_ms(), suppressed)) {
      SLUICE_LOG_WARN("conn={} proto=http peer={} event=connection_refused reason=\"limits.per_ip={}\" suppressed={}",
                      c->id(), c->peer(), per_ip, suppressed);
    }
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
  self->hls_sessions_.tick(now);
  self->file_cache_.sweep(now);
}

void HttpService::on_connection_closed(HttpConnection* c) {
  if (connections_.erase(c)) {
    closed_bytes_in += c->bytes_in();
    closed_bytes_out += c->bytes_out();
  }
}

void HttpService::stop() {
  if (stopping_) return;
  stopping_ = true;
  for (auto& l : listeners_) l->close();
  if (proxy_reader_) proxy_reader_->close_all();
  std::vector<HttpConnection*> all(connections_.begin(), connections_.end());
  for (HttpConnection* c : all) {
    if (connections_.count(c)) c->shutdown_gracefully();
  }
}

void HttpService::close_all(const std::string& reason) {
  std::vector<HttpConnection*> all(connections_.begin(), connections_.end());
  for (HttpConnection* c : all) {
    if (connections_.count(c)) c->close(reason);
  }
}

void HttpService::close_handles() {
  for (auto& l : listeners_) l->close();
  if (tls_) tls_->close();
  if (!handles_started_) return;
  close_handle(&tick_);
}

}  // namespace sluice::server
