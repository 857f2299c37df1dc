#include "server/io/listener.hpp"

#include <string_view>

#include "server/io/logging.hpp"
#include "server/io/net_address.hpp"
#include "server/io/uv_handle.hpp"

namespace sluice::server {

namespace {
constexpr int kListenBacklog = 1024;
}  // namespace

TcpListener::TcpListener(uv_loop_t* loop, const char* proto, OnPending on_pending)
    : proto_(proto), on_pending_(std::move(on_pending)) {
  uv_tcp_init(loop, &tcp_);
  tcp_.data = this;
}

Result<void> TcpListener::listen(const config::ListenAddress& addr) {
  // The RTMP side's messages predate the HTTP side and name no protocol.
  const bool rtmp = std::string_view(proto_) == "rtmp";
  sockaddr_storage ss{};
  int rc = addr.is_ipv6() ? uv_ip6_addr(addr.host.c_str(), addr.port, reinterpret_cast<sockaddr_in6*>(&ss))
                          : uv_ip4_addr(addr.host.c_str(), addr.port, reinterpret_cast<sockaddr_in*>(&ss));
  if (rc != 0) {
    return Error(Errc::Config, std::string(rtmp ? "bad listen address " : "bad http listen address ") + addr.to_string());
  }
  rc = uv_tcp_bind(&tcp_, reinterpret_cast<const sockaddr*>(&ss), addr.is_ipv6() ? UV_TCP_IPV6ONLY : 0);
  if (rc == 0) rc = uv_listen(as_stream(&tcp_), kListenBacklog, &TcpListener::on_connection);
  if (rc != 0) {
    close();
    return Error(Errc::Io, "cannot listen on " + addr.to_string() + (rtmp ? "" : " (" + std::string(proto_) + ")") +
                               ": " + uv_strerror(rc));
  }
  sockaddr_storage bound{};
  int len = sizeof bound;
  uv_tcp_getsockname(&tcp_, reinterpret_cast<sockaddr*>(&bound), &len);
  bound_ = format_sockaddr(bound);
  SLUICE_LOG_INFO("event=listen proto={} address={}", proto_, bound_);
  return ok();
}

void TcpListener::on_connection(uv_stream_t* listener, int status) {
  auto* self = owner_of<TcpListener>(listener);
  if (status < 0) {
    if (std::string_view(self->proto_) == "rtmp") {
      SLUICE_LOG_WARN("event=accept_error error=\"{}\"", uv_strerror(status));
    } else {
      SLUICE_LOG_WARN("event=accept_error proto={} error=\"{}\"", self->proto_, uv_strerror(status));
    }
    return;
  }
  self->on_pending_(listener);
}

void TcpListener::close() { close_handle(&tcp_); }

}  // namespace sluice::server
