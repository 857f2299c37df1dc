#include "server/http/service.hpp"

#include "server/io/net_address.hpp"

#include <http_parser.h>

#include <algorithm>

#include "server/http/connection.hpp"
#include "server/io/logging.hpp"
#include "server/server.hpp"

namespace sluice::server {

namespace {
constexpr uint64_t kTickMs = 1000;
constexpr int kListenBacklog = 1024;

}  // namespace

HttpService::HttpService(Server& server) : server_(server) {}

HttpService::~HttpService() = default;

Result<void> HttpService::listen_on(const config::ListenAddress& addr) {
  sockaddr_storage ss{};
  uv_loop_t* loop = server_.loop();
  int rc = addr.is_ipv6() ? uv_ip6_addr(addr.host.c_str(), addr.port, reinterpret_cast<sockaddr_in6*>(&ss))
                          : uv_ip4_addr(addr.host.c_str(), addr.port, reinterpret_cast<sockaddr_in*>(&ss));
  if (rc != 0) return Error(Errc::Config, "bad http listen address " + addr.to_string());
  auto l = std::make_unique<Listener>();
  l->service = this;
  uv_tcp_init(loop, &l->tcp);
  l->tcp.data = l.get();
  // docs/configuration.md: IPv6 listeners are IPv6-only, so "[::]" and "0.0.0.0" can share a port.
  rc = uv_tcp_bind(&l->tcp, reinterpret_cast<const sockaddr*>(&ss), addr.is_ipv6() ? UV_TCP_IPV6ONLY : 0);
  if (rc == 0) rc = uv_listen(reinterpret_cast<uv_stream_t*>(&l->tcp), kListenBacklog, &HttpService::on_connection);
  if (rc != 0) {
    uv_close(reinterpret_cast<uv_handle_t*>(&l->tcp), nullptr);
    listeners_.push_back(std::move(l));  // the handle memory must outlive uv_close
    return Error(Errc::Io, "cannot listen on " + addr.to_string() + " (http): " + uv_strerror(rc));
  }
  sockaddr_storage bound{};
  int len = sizeof bound;
  uv_tcp_getsockname(&l->tcp, reinterpret_cast<sockaddr*>(&bound), &len);
  bound_.push_back(format_sockaddr(bound));
  SLUICE_LOG_INFO("event=listen proto=http address={}", bound_.back());
  listeners_.push_back(std::move(l));
  return ok();
}

Result<void> HttpService::start() {
  // The parser's own header limit is process-wide; ours (per request, with a 431 answer) is lower.
  http_parser_set_max_header_size(static_cast<uint32_t>(HttpConnection::kMaxHeaderBytes * 2));
  flush_.start(server_.loop(), static_cast<uint64_t>(server_.config().rtmp.player_queue.write_delay.count()));
  flush_.use_ring(server_.write_ring());
  uv_timer_init(server_.loop(), &tick_);
  tick_.data = this;
  uv_timer_start(&tick_, &HttpService::on_tick, kTickMs, kTickMs);
  handles_started_ = true;
  for (const auto& addr : server_.config().http.listen) {
    auto r = listen_on(addr);
    if (!r) return r;
  }
  return ok();
}

void HttpService::on_connection(uv_stream_t* listener, int status) {
  auto* l = static_cast<Listener*>(listener->data);
  HttpService& self = *l->service;
  if (status < 0) {
    SLUICE_LOG_WARN("event=accept_error proto=http error=\"{}\"", uv_strerror(status));
    return;
  }
  auto* c = new HttpConnection(self, self.server_.next_connection_id());
  self.connections_.insert(c);
  int rc = c->accept(listener);
  if (rc != 0) {
    c->close(std::string("accept failed: ") + uv_strerror(rc));
    return;
  }
  // One limit for the whole server: file descriptors and memory do not care about the protocol.
  uint32_t max = self.server_.config().rtmp.max_connections;
  if (self.stopping_) {
    c->close("server is stopping");
  } else if (max != 0 && self.server_.connection_count() + self.connections_.size() > max) {
    c->reject_overloaded("too many connections (rtmp.max_connections=" + std::to_string(max) + ")");
  }
}

HttpConnection* HttpService::find(uint64_t id) const {
  for (HttpConnection* c : connections_)
    if (c->id() == id) return c;
  return nullptr;
}


void HttpService::on_tick(uv_timer_t* timer) {
  auto* self = static_cast<HttpService*>(timer->data);
  uint64_t now = self->server_.now_ms();
  std::vector<HttpConnection*> all(self->connections_.begin(), self->connections_.end());
  for (HttpConnection* c : all) {
    if (self->connections_.count(c)) c->on_tick(now);
  }
}

void HttpService::request_flush(HttpConnection* c) { flush_.flush_soon(c); }

void HttpService::request_held_flush(HttpConnection* c) { flush_.flush_held(c); }

void HttpService::cancel_flush(HttpConnection* c) { flush_.cancel(c); }

void HttpService::on_connection_closed(HttpConnection* c) {
  cancel_flush(c);
  if (connections_.erase(c)) {
    closed_bytes_in += c->bytes_in();
    closed_bytes_out += c->bytes_out();
  }
}

void HttpService::stop() {
  if (stopping_) return;
  stopping_ = true;
  for (auto& l : listeners_) {
    auto* h = reinterpret_cast<uv_handle_t*>(&l->tcp);
    if (!uv_is_closing(h)) uv_close(h, nullptr);
  }
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
  for (auto& l : listeners_) {
    auto* h = reinterpret_cast<uv_handle_t*>(&l->tcp);
    if (!uv_is_closing(h)) uv_close(h, nullptr);
  }
  if (!handles_started_) return;
  auto close = [](auto* h) {
    if (!uv_is_closing(reinterpret_cast<uv_handle_t*>(h))) uv_close(reinterpret_cast<uv_handle_t*>(h), nullptr);
  };
  flush_.close_handles();
  close(&tick_);
}

}  // namespace sluice::server
