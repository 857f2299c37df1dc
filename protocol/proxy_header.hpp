// The PROXY protocol header (versions 1 and 2) that a TCP load balancer such as HAProxy puts in
// front of a connection's own bytes to say who the client really is, read sans-I/O. The format,
// what each case means and how to turn it on in HAProxy are in docs/proxy_protocol.md.
//
// Lifecycle:
//  1. Construct one ProxyHeaderParser per connection accepted on a listener configured for the
//     PROXY protocol, and only there: the server must never guess whether a header is present,
//     or any client could claim any address (docs/proxy_protocol.md, "Security").
//  2. Call feed() with every received byte, before anything else sees them (TLS included: the
//     proxy sends the header in clear before the client's ClientHello), until done() or failed().
//     feed() may stop at any byte boundary: one byte at a time, random splits and one buffer give
//     identical results, and it returns as early as the bytes seen so far prove a header wrong.
//  3. When done(), header() says what the proxy reported. feed() never takes a byte past the
//     header: what it did not consume of the last call, and everything after, belongs to the
//     application protocol (RTMP handshake, TLS, HTTP) and goes to it unchanged.
//  4. When failed(), close the connection; every later feed() returns the same error.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.hpp"

namespace sluice::protocol {

// An IPv4 or IPv6 address in network byte order, as the PROXY header carries it.
struct IpAddress {
  bool v6 = false;
  std::array<uint8_t, 16> bytes{};  // IPv4 uses the first 4; the rest stay zero.

  static IpAddress from_v4(std::span<const uint8_t, 4> raw);
  static IpAddress from_v6(std::span<const uint8_t, 16> raw);

  // 4 or 16 bytes: the form of StreamSocket::peer_address() that the CIDR rules match
  // (config/address.hpp, Cidr::contains).
  std::span<const uint8_t> raw() const { return {bytes.data(), v6 ? size_t{16} : size_t{4}}; }
  // "192.0.2.1"; "2001:db8::1" in the canonical form (lower case, the longest run of two or more
  // zero groups as "::", IPv4-mapped addresses as "::ffff:192.0.2.1"; docs/proxy_protocol.md).
  std::string to_string() const;

  bool operator==(const IpAddress&) const = default;
};

// The text forms, as strict as glibc's inet_pton(AF_INET / AF_INET6): IPv4 is exactly four decimal
// numbers 0-255 without leading zeros (which could be read as octal); IPv6 takes one "::", groups
// of 1-4 hex digits and a dotted IPv4 tail. No spaces, zone ids or prefixes.
std::optional<IpAddress> parse_ipv4(std::string_view text);
std::optional<IpAddress> parse_ipv6(std::string_view text);

struct Endpoint {
  IpAddress address;
  uint16_t port = 0;

  // "192.0.2.1:51234", "[2001:db8::1]:443": the form server/io/net_address.cpp logs peers in.
  std::string to_string() const;

  bool operator==(const Endpoint&) const = default;
};

enum class ProxyKind : uint8_t {
  // The proxy relayed a TCP client: source is the client, destination the address it connected to.
  Proxied,
  // v2 LOCAL: the proxy opened the connection for itself (a health check). Keep the socket's peer.
  Local,
  // The proxy relayed a client it could not describe, or over a transport this server does not
  // take addresses from: v1 UNKNOWN; v2 PROXY with AF_UNSPEC or an unspecified transport, AF_UNIX
  // (addresses ignored) or UDP (the specification's fallback). Keep the socket's peer.
  Unspecified,
};

struct ProxyHeader {
  uint8_t version = 0;  // 1 (text) or 2 (binary)
  ProxyKind kind = ProxyKind::Unspecified;
  size_t size = 0;       // bytes of the header on the wire, CRLF and TLVs included
  Endpoint source;       // Proxied only
  Endpoint destination;  // Proxied only
  size_t tlv_count = 0;  // v2: the TLVs walked (and skipped) after the address block

  // The client address to use instead of the socket's peer, if any.
  const Endpoint* client() const { return kind == ProxyKind::Proxied ? &source : nullptr; }
};

class ProxyHeaderParser {
 public:
  // The longest v1 line, CRLF included (docs/proxy_protocol.md, "Version 1").
  static constexpr size_t kMaxV1Line = 107;
  // The fixed part of a v2 header: signature, version/command, family/transport, length.
  static constexpr size_t kV2FixedSize = 16;
  // The largest v2 length field accepted. The format allows 65535, but a header is meant to fit
  // one 536-byte segment, and every TLV a proxy sends today (SNI, a 128-byte unique id, the TLS
  // details, AWS/Azure/GCP link ids) fits with an IPv6 or AF_UNIX block in 1 KiB. The cap bounds
  // what an untrusted peer on a misconfigured listener can make each connection hold.
  static constexpr size_t kMaxV2Length = 1024;

  // Takes header bytes and returns how many of `in` it took: all of them while the header is
  // incomplete, fewer when the header ends inside `in`, none once done().
  // Errors (the parser is then failed() and every later call returns the same error):
  //  - Errc::Malformed: the bytes do not start with "PROXY " or the v2 signature (the message says
  //    what they look like: an RTMP handshake, TLS, HTTP); a v1 line that breaks the grammar
  //    (unknown protocol, not one space between fields, an address that is not a strict IPv4 or
  //    IPv6 literal of the announced family, a port that is not 0-65535 in plain decimal, a lone
  //    CR or LF); a v2 version other than 2, a command other than LOCAL or PROXY, an unknown
  //    family or transport, a length shorter than the address block, a TLV that runs past the end.
  //  - Errc::LimitExceeded: a v1 line with no CRLF in its first 107 bytes; a v2 length over
  //    kMaxV2Length (reported as soon as the length field arrives).
  Result<size_t> feed(std::span<const uint8_t> in);

  bool done() const { return state_ == State::Done; }
  bool failed() const { return state_ == State::Failed; }
  // Valid once done().
  const ProxyHeader& header() const { return header_; }

 private:
  enum class State : uint8_t { Start, V1Prefix, V1Line, V2Signature, V2Fixed, V2Body, Done, Failed };

  void on_byte(uint8_t b);
  void on_v1_byte(uint8_t b);
  void on_v2_fixed();
  void finish_v1();
  void finish_v2();
  void fail(Error error);

  State state_ = State::Start;
  std::vector<uint8_t> buf_;  // The header so far; released once the header is complete.
  size_t v2_length_ = 0;
  ProxyHeader header_;
  Error error_;
};

// True when `bytes` begin like a PROXY header (either version), as far as they go. For a better
// message when a listener that does not expect the header receives one; never to decide whether
// to parse one (see the lifecycle above).
bool looks_like_proxy_header(std::span<const uint8_t> bytes);

}  // namespace sluice::protocol
