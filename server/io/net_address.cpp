#include "server/io/net_address.hpp"

#include <sys/socket.h>

namespace sluice::server {

std::string format_sockaddr(const sockaddr_storage& ss) {
  char host[INET6_ADDRSTRLEN] = {0};
  if (ss.ss_family == AF_INET) {
    auto* in = reinterpret_cast<const sockaddr_in*>(&ss);
    uv_ip4_name(in, host, sizeof host);
    return std::string(host) + ":" + std::to_string(ntohs(in->sin_port));
  }
  auto* in6 = reinterpret_cast<const sockaddr_in6*>(&ss);
  uv_ip6_name(in6, host, sizeof host);
  return "[" + std::string(host) + "]:" + std::to_string(ntohs(in6->sin6_port));
}

PeerAddress peer_address_of(const sockaddr_storage& ss) {
  if (ss.ss_family != AF_INET && ss.ss_family != AF_INET6) return {};
  PeerAddress out;
  out.text = format_sockaddr(ss);
  if (ss.ss_family == AF_INET) {
    auto* b = reinterpret_cast<const uint8_t*>(&reinterpret_cast<const sockaddr_in*>(&ss)->sin_addr);
    out.raw.assign(b, b + 4);
  } else {
    auto* b = reinterpret_cast<const uint8_t*>(&reinterpret_cast<const sockaddr_in6*>(&ss)->sin6_addr);
    out.raw.assign(b, b + 16);
  }
  return out;
}

std::optional<PeerAddress> accepted_peer(const sockaddr_storage& ss) {
  PeerAddress address = peer_address_of(ss);
  if (address.text.empty()) return std::nullopt;
  return address;
}

PeerAddress peer_address(const uv_tcp_t* tcp) {
  sockaddr_storage ss{};
  int len = sizeof ss;
  if (uv_tcp_getpeername(tcp, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return {};
  return peer_address_of(ss);
}

PeerAddress socket_peer_address(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return {};
  return peer_address_of(ss);
}

}  // namespace sluice::server
