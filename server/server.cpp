#include "server/server.hpp"

#include <algorithm>
#include <csignal>

#include "server/connection.hpp"
#include "server/http_service.hpp"
#include "server/logging.hpp"
#include "server/net_address.hpp"

namespace sluice::server {

namespace {
constexpr size_t kReadBufferSize = 64 * 1024;
constexpr uint64_t kTickMs = 1000;
// How long a graceful stop waits for the last bytes to reach peers before closing everything.
constexpr uint64_t kStopGraceMs = 1500;
constexpr int kListenBacklog = 1024;

}  // namespace

Server::Server(uv_loop_t* loop, config::Config config)
    : loop_(loop), config_(std::move(config)), vod_files_(loop), read_buffer_(kReadBufferSize) {}

Server::~Server() = default;

size_t Server::http_connection_count() const { return http_ ? http_->connection_count() : 0; }

uv_buf_t Server::read_buffer() {
  return uv_buf_init(reinterpret_cast<char*>(read_buffer_.data()), static_cast<unsigned>(read_buffer_.size()));
}

protocol::Result<void> Server::listen_on(const config::ListenAddress& addr) {
  sockaddr_storage ss{};
  int rc = addr.is_ipv6() ? uv_ip6_addr(addr.host.c_str(), addr.port, reinterpret_cast<sockaddr_in6*>(&ss))
                          : uv_ip4_addr(addr.host.c_str(), addr.port, reinterpret_cast<sockaddr_in*>(&ss));
  if (rc != 0) return protocol::Error(protocol::Errc::Config, "bad listen address " + addr.to_string());
  auto l = std::make_unique<Listener>();
  l->server = this;
  uv_tcp_init(loop_, &l->tcp);
  l->tcp.data = l.get();
  // IPv6 listeners are IPv6-only, so "0.0.0.0:1935" and "[::]:1935" can both be configured.
  rc = uv_tcp_bind(&l->tcp, reinterpret_cast<const sockaddr*>(&ss), addr.is_ipv6() ? UV_TCP_IPV6ONLY : 0);
  if (rc == 0) rc = uv_listen(reinterpret_cast<uv_stream_t*>(&l->tcp), kListenBacklog, &Server::on_connection);
  if (rc != 0) {
    uv_close(reinterpret_cast<uv_handle_t*>(&l->tcp), nullptr);
    // The handle memory must outlive uv_close: keep it until the loop ends.
    listeners_.push_back(std::move(l));
    return protocol::Error(protocol::Errc::Io, "cannot listen on " + addr.to_string() + ": " + uv_strerror(rc));
  }
  sockaddr_storage bound{};
  int len = sizeof bound;
  uv_tcp_getsockname(&l->tcp, reinterpret_cast<sockaddr*>(&bound), &len);
  bound_.push_back(format_sockaddr(bound));
  SLUICE_LOG_INFO("event=listen proto=rtmp address={}", bound_.back());
  listeners_.push_back(std::move(l));
  return protocol::ok();
}

protocol::Result<void> Server::start() {
  started_ms_ = now_ms();
  for (const auto& addr : config_.rtmp.listen) {
    auto r = listen_on(addr);
    if (!r) return r;
  }
  if (config_.http.enabled) {
    http_ = std::make_unique<HttpService>(*this);
    auto r = http_->start();
    if (!r) return r;
  }
  uv_check_init(loop_, &check_);
  check_.data = this;
  uv_check_start(&check_, &Server::on_check);
  uv_timer_init(loop_, &tick_);
  tick_.data = this;
  uv_timer_start(&tick_, &Server::on_tick, kTickMs, kTickMs);
  const int signums[2] = {SIGINT, SIGTERM};
  for (size_t i = 0; i < signals_.size(); ++i) {
    uv_signal_init(loop_, &signals_[i]);
    signals_[i].data = this;
    uv_signal_start(&signals_[i], &Server::on_signal, signums[i]);
  }
  // A peer that vanishes must not kill the process with SIGPIPE.
  std::signal(SIGPIPE, SIG_IGN);
  return protocol::ok();
}

void Server::on_connection(uv_stream_t* listener, int status) {
  auto* l = static_cast<Listener*>(listener->data);
  Server& self = *l->server;
  if (status < 0) {
    SLUICE_LOG_WARN("event=accept_error error=\"{}\"", uv_strerror(status));
    return;
  }
  auto* c = new Connection(self, self.next_connection_id_++);
  self.connections_.insert(c);
  int rc = c->accept(listener);
  if (rc != 0) {
    c->close(std::string("accept failed: ") + uv_strerror(rc));
    return;
  }
  uint32_t max = self.config_.rtmp.max_connections;
  if (self.stopping_) {
    c->close("server is stopping");
  } else if (max != 0 && self.connections_.size() + self.http_connection_count() > max) {
    c->close("too many connections (rtmp.max_connections=" + std::to_string(max) + ")");
  }
}

void Server::request_flush(Connection* c) { flush_list_.add(c); }

void Server::cancel_flush(Connection* c) { flush_list_.remove(c); }

void Server::flush_pending() { flush_list_.drain(); }

void Server::on_check(uv_check_t* check) { static_cast<Server*>(check->data)->flush_pending(); }

void Server::on_tick(uv_timer_t* timer) {
  auto* self = static_cast<Server*>(timer->data);
  uint64_t now = self->now_ms();
  // Copy: a tick may close connections.
  std::vector<Connection*> all(self->connections_.begin(), self->connections_.end());
  for (Connection* c : all) {
    if (self->connections_.count(c) && !c->closing()) c->on_tick(now);
  }
}

void Server::on_connection_closed(Connection* c) {
  cancel_flush(c);
  connections_.erase(c);
}

void Server::on_signal(uv_signal_t* signal, int signum) {
  auto* self = static_cast<Server*>(signal->data);
  SLUICE_LOG_INFO("event=signal signal={} action=stop", signum == SIGINT ? "SIGINT" : "SIGTERM");
  self->stop();
}

void Server::stop() {
  if (stopping_) return;
  stopping_ = true;
  for (auto& l : listeners_) {
    if (!uv_is_closing(reinterpret_cast<uv_handle_t*>(&l->tcp))) uv_close(reinterpret_cast<uv_handle_t*>(&l->tcp), nullptr);
  }
  std::vector<Connection*> all(connections_.begin(), connections_.end());
  for (Connection* c : all) {
    if (connections_.count(c)) c->shutdown_gracefully();
  }
  if (http_) http_->stop();
  uv_timer_init(loop_, &stop_timer_);
  stop_timer_.data = this;
  uv_timer_start(
      &stop_timer_,
      [](uv_timer_t* t) {
        auto* self = static_cast<Server*>(t->data);
        std::vector<Connection*> rest(self->connections_.begin(), self->connections_.end());
        for (Connection* c : rest) c->close("server stopped");
        if (self->http_) self->http_->close_all("server stopped");
        self->close_handles();
      },
      kStopGraceMs, 0);
  if (connections_.empty() && http_connection_count() == 0) {
    uv_timer_stop(&stop_timer_);
    close_handles();
  }
}

void Server::close_handles() {
  auto close = [](auto* h) {
    if (!uv_is_closing(reinterpret_cast<uv_handle_t*>(h))) uv_close(reinterpret_cast<uv_handle_t*>(h), nullptr);
  };
  close(&check_);
  close(&tick_);
  close(&stop_timer_);
  for (auto& s : signals_) close(&s);
  if (http_) http_->close_handles();
}

}  // namespace sluice::server
