// Listen addresses ("0.0.0.0:1935", "[::]:1935", ":1935") and CIDR blocks ("10.0.0.0/8", "::1/128"):
// parsed and checked once at load time so the server never re-parses strings per connection.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "base/result.hpp"

namespace sluice::config {

// A numeric address to bind. Host names are not accepted: binding must not depend on DNS.
struct ListenAddress {
  std::string host;   // IPv4 or IPv6 literal without brackets: "0.0.0.0", "::", "127.0.0.1".
  uint16_t port = 0;  // 0 asks the kernel for a free port (tests).

  bool is_ipv6() const { return host.find(':') != std::string::npos; }
  std::string to_string() const;  // "0.0.0.0:1935", "[::]:1935"; parse_listen_address reads it back.

  bool operator==(const ListenAddress&) const = default;
};

// Accepts "host:port", "[v6]:port", ":port" and "port" (the last two mean host 0.0.0.0).
Result<ListenAddress> parse_listen_address(std::string_view text);

// An IPv4 or IPv6 network. IPv4 blocks also match IPv4-mapped IPv6 peers (::ffff:a.b.c.d), which is
// what a dual-stack "[::]" listener reports for IPv4 clients.
struct Cidr {
  std::array<uint8_t, 16> address{};  // Network address; IPv4 uses the first 4 bytes. Host bits are 0.
  uint8_t prefix = 0;                 // 0..32 for IPv4, 0..128 for IPv6.
  bool ipv6 = false;

  static Cidr loopback_v4();  // 127.0.0.1/32
  static Cidr loopback_v6();  // ::1/128

  // peer is a raw address in network byte order: 4 bytes (IPv4) or 16 bytes (IPv6).
  bool contains(std::span<const uint8_t> peer) const;
  std::string to_string() const;  // "10.0.0.0/8", "::1/128"

  bool operator==(const Cidr&) const = default;
};

// Accepts "a.b.c.d/n", "v6/n" and a bare address (a /32 or /128). Rejects host bits set past the
// prefix ("10.1.2.3/8"), because that is almost always a typo, and says which network was meant.
Result<Cidr> parse_cidr(std::string_view text);

// The access rule used by publish_allow and http.api allow: an empty list allows everyone.
bool cidr_list_allows(std::span<const Cidr> list, std::span<const uint8_t> peer);

}  // namespace sluice::config
