#include "server/webrtc/udp_port.hpp"

#include <netinet/in.h>

#include <cstring>

#include "server/io/uv_handle.hpp"

namespace sluice::server {

namespace {
// One datagram at a time, handled before the next read: one buffer for the port.
constexpr size_t kMaxDatagram = 2048;
thread_local uint8_t t_buffer[kMaxDatagram];
}  // namespace

UdpPeer UdpPeer::from(const sockaddr* address) {
  UdpPeer p;
  if (address->sa_family == AF_INET) {
    std::memcpy(&p.address, address, sizeof(sockaddr_in));
    const auto* in = reinterpret_cast<const sockaddr_in*>(address);
    p.endpoint.address =
        protocol::IpAddress::from_v4(std::span<const uint8_t, 4>(reinterpret_cast<const uint8_t*>(&in->sin_addr), 4));
    p.endpoint.port = ntohs(in->sin_port);
  } else if (address->sa_family == AF_INET6) {
    std::memcpy(&p.address, address, sizeof(sockaddr_in6));
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(address);
    p.endpoint.address = protocol::IpAddress::from_v6(
        std::span<const uint8_t, 16>(reinterpret_cast<const uint8_t*>(&in6->sin6_addr), 16));
    p.endpoint.port = ntohs(in6->sin6_port);
  }
  return p;
}

Result<uint16_t> UdpPort::open(const std::string& host, uint16_t port) {
  sockaddr_storage ss{};
  const bool v6 = host.find(':') != std::string::npos;
  int rc = v6 ? uv_ip6_addr(host.c_str(), port, reinterpret_cast<sockaddr_in6*>(&ss))
              : uv_ip4_addr(host.c_str(), port, reinterpret_cast<sockaddr_in*>(&ss));
  if (rc != 0) return Error(Errc::Config, "webrtc: bad address " + host + ": " + uv_strerror(rc));
  uv_udp_init(loop_, &udp_);
  udp_.data = this;
  open_ = true;
  rc = uv_udp_bind(&udp_, reinterpret_cast<const sockaddr*>(&ss), v6 ? UV_UDP_IPV6ONLY : 0);
  if (rc != 0) {
    return Error(Errc::Io, "webrtc: cannot bind udp " + host + ":" + std::to_string(port) + ": " + uv_strerror(rc));
  }
  // Room for bursts: a keyframe to many players leaves in one loop turn.
  int size = 4 << 20;
  uv_send_buffer_size(reinterpret_cast<uv_handle_t*>(&udp_), &size);
  size = 4 << 20;
  uv_recv_buffer_size(reinterpret_cast<uv_handle_t*>(&udp_), &size);
  sockaddr_storage bound{};
  int len = sizeof bound;
  uv_udp_getsockname(&udp_, reinterpret_cast<sockaddr*>(&bound), &len);
  rc = uv_udp_recv_start(&udp_, &UdpPort::on_alloc, &UdpPort::on_recv);
  if (rc != 0) return Error(Errc::Io, std::string("webrtc: uv_udp_recv_start: ") + uv_strerror(rc));
  return UdpPeer::from(reinterpret_cast<const sockaddr*>(&bound)).endpoint.port;
}

bool UdpPort::send(std::span<const uint8_t> datagram, const UdpPeer& to) {
  if (!open_) return false;
  uv_buf_t buf = uv_buf_init(const_cast<char*>(reinterpret_cast<const char*>(datagram.data())),
                             static_cast<unsigned>(datagram.size()));
  if (uv_udp_try_send(&udp_, &buf, 1, reinterpret_cast<const sockaddr*>(&to.address)) < 0) {
    ++send_drops_;
    return false;
  }
  ++out_;
  return true;
}

void UdpPort::close() {
  if (!open_) return;
  open_ = false;
  uv_udp_recv_stop(&udp_);
  close_handle(&udp_);
}

void UdpPort::on_alloc(uv_handle_t*, size_t, uv_buf_t* buf) {
  *buf = uv_buf_init(reinterpret_cast<char*>(t_buffer), kMaxDatagram);
}

void UdpPort::on_recv(uv_udp_t* h, ssize_t n, const uv_buf_t* buf, const sockaddr* from, unsigned flags) {
  auto* self = static_cast<UdpPort*>(h->data);
  // n == 0 with no address: nothing more to read now; truncated datagrams are nobody's media.
  if (n <= 0 || from == nullptr || (flags & UV_UDP_PARTIAL) != 0) return;
  ++self->in_;
  self->on_datagram_({reinterpret_cast<const uint8_t*>(buf->base), static_cast<size_t>(n)}, UdpPeer::from(from));
}

}  // namespace sluice::server
