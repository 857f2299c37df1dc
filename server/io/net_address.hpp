// Socket addresses as the server logs and checks them: "1.2.3.4:5678" / "[::1]:5678" text, and
// the raw address bytes that CIDR rules (publish_allow, http.api.allow) match against.
#pragma once

#include <uv.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace sluice::server {

std::string format_sockaddr(const sockaddr_storage& ss);

struct PeerAddress {
  std::string text;          // empty when the peer is unknown
  std::vector<uint8_t> raw;  // 4 bytes (IPv4) or 16 bytes (IPv6), network order
};
PeerAddress peer_address(const uv_tcp_t* tcp);
// From an address accept() filled in (no getpeername call); empty text for another family.
PeerAddress peer_address_of(const sockaddr_storage& ss);
// The same for a new connection: nothing for another family (the connection looks its peer up).
std::optional<PeerAddress> accepted_peer(const sockaddr_storage& ss);
// The same for a socket no handle owns yet (an accepted fd waiting for its PROXY header).
PeerAddress socket_peer_address(int fd);

}  // namespace sluice::server
