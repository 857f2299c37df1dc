// Tests for protocol/proxy_header.{hpp,cpp}.
//
// The kHaproxy* arrays are the files tests/fuzz/corpus/proxy_header/haproxy_* as
// tests/fuzz/proxy_header_seeds.py captured them from Debian's haproxy 2.6 in TCP mode (send-proxy,
// send-proxy-v2, proxy-v2-options crc32c,unique-id, check-send-proxy health checks), followed by
// the first bytes the client sent; `tests/fuzz/proxy_header_seeds.py --print-cpp` prints them.
// The other headers are written here by hand from docs/proxy_protocol.md. Address parsing and
// printing are checked against glibc's inet_pton and inet_ntop, which protocol/ may not use.
#include "protocol/proxy_header.hpp"

#include <arpa/inet.h>
#include <doctest/doctest.h>

#include <algorithm>
#include <functional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

using namespace sluice;
using namespace sluice::protocol;

namespace {

// tests/fuzz/corpus/proxy_header/haproxy_v1_check
const uint8_t kHaproxyV1Check[] = {
    0x50, 0x52, 0x4f, 0x58, 0x59, 0x20, 0x54, 0x43, 0x50, 0x34, 0x20, 0x31, 0x32, 0x37, 0x2e,
    0x30, 0x2e, 0x30, 0x2e, 0x31, 0x20, 0x31, 0x32, 0x37, 0x2e, 0x30, 0x2e, 0x30, 0x2e, 0x31,
    0x20, 0x31, 0x39, 0x34, 0x32, 0x33, 0x20, 0x31, 0x39, 0x34, 0x32, 0x31, 0x0d, 0x0a,
};
// tests/fuzz/corpus/proxy_header/haproxy_v1_mapped_http
const uint8_t kHaproxyV1MappedHttp[] = {
    0x50, 0x52, 0x4f, 0x58, 0x59, 0x20, 0x54, 0x43, 0x50, 0x36, 0x20, 0x3a, 0x3a, 0x66, 0x66, 0x66, 0x66, 0x3a, 0x31,
    0x32, 0x37, 0x2e, 0x30, 0x2e, 0x30, 0x2e, 0x31, 0x20, 0x3a, 0x3a, 0x66, 0x66, 0x66, 0x66, 0x3a, 0x31, 0x32, 0x37,
    0x2e, 0x30, 0x2e, 0x30, 0x2e, 0x31, 0x20, 0x31, 0x39, 0x34, 0x35, 0x32, 0x20, 0x31, 0x39, 0x34, 0x30, 0x32, 0x0d,
    0x0a, 0x47, 0x45, 0x54, 0x20, 0x2f, 0x6c, 0x69, 0x76, 0x65, 0x2f, 0x73, 0x74, 0x72, 0x65, 0x61, 0x6d, 0x2e, 0x66,
    0x6c, 0x76, 0x20, 0x48, 0x54, 0x54, 0x50, 0x2f, 0x31, 0x2e, 0x31, 0x0d, 0x0a, 0x48, 0x6f, 0x73, 0x74, 0x3a, 0x20,
    0x31, 0x32, 0x37, 0x2e, 0x30, 0x2e, 0x30, 0x2e, 0x31, 0x3a, 0x38, 0x30, 0x38, 0x30, 0x0d, 0x0a, 0x0d, 0x0a,
};
// tests/fuzz/corpus/proxy_header/haproxy_v1_tcp4_rtmp
const uint8_t kHaproxyV1Tcp4Rtmp[] = {
    0x50, 0x52, 0x4f, 0x58, 0x59, 0x20, 0x54, 0x43, 0x50, 0x34, 0x20, 0x31, 0x32, 0x37, 0x2e,
    0x30, 0x2e, 0x30, 0x2e, 0x31, 0x20, 0x31, 0x32, 0x37, 0x2e, 0x30, 0x2e, 0x30, 0x2e, 0x31,
    0x20, 0x31, 0x39, 0x34, 0x35, 0x30, 0x20, 0x31, 0x39, 0x34, 0x30, 0x30, 0x0d, 0x0a, 0x03,
    0x00, 0x00, 0x00, 0x00, 0x09, 0x00, 0x7c, 0x02, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07,
};
// tests/fuzz/corpus/proxy_header/haproxy_v1_tcp6_http
const uint8_t kHaproxyV1Tcp6Http[] = {
    0x50, 0x52, 0x4f, 0x58, 0x59, 0x20, 0x54, 0x43, 0x50, 0x36, 0x20, 0x3a, 0x3a, 0x31, 0x20, 0x3a, 0x3a, 0x31,
    0x20, 0x31, 0x39, 0x34, 0x35, 0x31, 0x20, 0x31, 0x39, 0x34, 0x30, 0x31, 0x0d, 0x0a, 0x47, 0x45, 0x54, 0x20,
    0x2f, 0x6c, 0x69, 0x76, 0x65, 0x2f, 0x73, 0x74, 0x72, 0x65, 0x61, 0x6d, 0x2e, 0x66, 0x6c, 0x76, 0x20, 0x48,
    0x54, 0x54, 0x50, 0x2f, 0x31, 0x2e, 0x31, 0x0d, 0x0a, 0x48, 0x6f, 0x73, 0x74, 0x3a, 0x20, 0x31, 0x32, 0x37,
    0x2e, 0x30, 0x2e, 0x30, 0x2e, 0x31, 0x3a, 0x38, 0x30, 0x38, 0x30, 0x0d, 0x0a, 0x0d, 0x0a,
};
// tests/fuzz/corpus/proxy_header/haproxy_v2_check_local
const uint8_t kHaproxyV2CheckLocal[] = {
    0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a, 0x20, 0x00, 0x00, 0x00,
};
// tests/fuzz/corpus/proxy_header/haproxy_v2_tcp4_rtmp
const uint8_t kHaproxyV2Tcp4Rtmp[] = {
    0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a, 0x21, 0x11, 0x00,
    0x0c, 0x7f, 0x00, 0x00, 0x01, 0x7f, 0x00, 0x00, 0x01, 0x4b, 0xfd, 0x4b, 0xcb, 0x03, 0x00,
    0x00, 0x00, 0x00, 0x09, 0x00, 0x7c, 0x02, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07,
};
// tests/fuzz/corpus/proxy_header/haproxy_v2_tcp6_http
const uint8_t kHaproxyV2Tcp6Http[] = {
    0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a, 0x21, 0x21, 0x00, 0x24, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x4b, 0xfe, 0x4b, 0xcc, 0x47, 0x45,
    0x54, 0x20, 0x2f, 0x6c, 0x69, 0x76, 0x65, 0x2f, 0x73, 0x74, 0x72, 0x65, 0x61, 0x6d, 0x2e, 0x66, 0x6c, 0x76,
    0x20, 0x48, 0x54, 0x54, 0x50, 0x2f, 0x31, 0x2e, 0x31, 0x0d, 0x0a, 0x48, 0x6f, 0x73, 0x74, 0x3a, 0x20, 0x31,
    0x32, 0x37, 0x2e, 0x30, 0x2e, 0x30, 0x2e, 0x31, 0x3a, 0x38, 0x30, 0x38, 0x30, 0x0d, 0x0a, 0x0d, 0x0a,
};
// tests/fuzz/corpus/proxy_header/haproxy_v2_tlv_rtmp
const uint8_t kHaproxyV2TlvRtmp[] = {
    0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a, 0x21, 0x11, 0x00, 0x35, 0x7f,
    0x00, 0x00, 0x01, 0x7f, 0x00, 0x00, 0x01, 0x4b, 0xff, 0x4b, 0xcd, 0x03, 0x00, 0x04, 0xb1, 0x48, 0xf4,
    0xd2, 0x05, 0x00, 0x1f, 0x31, 0x32, 0x37, 0x2e, 0x30, 0x2e, 0x30, 0x2e, 0x31, 0x3a, 0x31, 0x39, 0x34,
    0x35, 0x35, 0x5f, 0x31, 0x32, 0x37, 0x2e, 0x30, 0x2e, 0x30, 0x2e, 0x31, 0x3a, 0x31, 0x39, 0x34, 0x30,
    0x35, 0x03, 0x00, 0x00, 0x00, 0x00, 0x09, 0x00, 0x7c, 0x02, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07,
};

// What the client sent after the header in the captures (tests/fuzz/proxy_header_seeds.py).
const std::vector<uint8_t> kRtmpFirst = {0x03, 0x00, 0x00, 0x00, 0x00, 0x09, 0x00, 0x7c,
                                         0x02, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07};
const std::string_view kHttpFirst = "GET /live/stream.flv HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n\r\n";

using Bytes = std::vector<uint8_t>;

Bytes bytes_of(std::string_view text) { return Bytes(text.begin(), text.end()); }

template <size_t N>
Bytes bytes_of(const uint8_t (&array)[N]) {
  return Bytes(array, array + N);
}

Bytes concat(Bytes a, const Bytes& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

const Bytes kV2Signature = {0x0D, 0x0A, 0x0D, 0x0A, 0x00, 0x0D, 0x0A, 0x51, 0x55, 0x49, 0x54, 0x0A};

Bytes v2(uint8_t ver_cmd, uint8_t family, const Bytes& body) {
  Bytes out = kV2Signature;
  out.push_back(ver_cmd);
  out.push_back(family);
  out.push_back(static_cast<uint8_t>(body.size() >> 8));
  out.push_back(static_cast<uint8_t>(body.size()));
  return concat(out, body);
}

Bytes tlv(uint8_t type, const Bytes& value) {
  Bytes out = {type, static_cast<uint8_t>(value.size() >> 8), static_cast<uint8_t>(value.size())};
  return concat(out, value);
}

// 192.0.2.10:51234 -> 198.51.100.1:1935
const Bytes kInetBlock = {192, 0, 2, 10, 198, 51, 100, 1, 0xC8, 0x22, 0x07, 0x8F};

Bytes inet6_block() {
  Bytes out(36, 0);
  inet_pton(AF_INET6, "2001:db8::10", out.data());
  inet_pton(AF_INET6, "2001:db8::1", out.data() + 16);
  out[32] = 0x01;  // 443
  out[33] = 0xBB;
  out[34] = 0x20;  // 8443
  out[35] = 0xFB;
  return out;
}

// Chooses the size of the next read, like a socket would.
using Splitter = std::function<size_t()>;

struct Outcome {
  bool done = false;
  bool failed = false;
  Errc code = Errc::Ok;
  std::string message;
  ProxyHeader header;
  size_t consumed = 0;  // of the whole input, when done
};

void check_same(const Outcome& a, const Outcome& b) {
  CHECK(a.done == b.done);
  CHECK(a.failed == b.failed);
  CHECK(a.code == b.code);
  CHECK(a.message == b.message);
  CHECK(a.consumed == b.consumed);
  CHECK(a.header.version == b.header.version);
  CHECK(a.header.kind == b.header.kind);
  CHECK(a.header.size == b.header.size);
  CHECK(a.header.source == b.header.source);
  CHECK(a.header.destination == b.header.destination);
  CHECK(a.header.tlv_count == b.header.tlv_count);
}

// Feeds `in` in pieces until the parser is done or fails, as a connection's reads would.
Outcome run(std::span<const uint8_t> in, const Splitter& next) {
  ProxyHeaderParser parser;
  Outcome out;
  size_t pos = 0;
  while (pos < in.size() && !parser.done()) {
    const size_t n = std::min(next(), in.size() - pos);
    auto used = parser.feed(in.subspan(pos, n));
    if (!used) {
      out.failed = true;
      out.code = used.error().code;
      out.message = used.error().message();
      // A failure sticks.
      auto again = parser.feed(in.subspan(pos));
      CHECK(!again.ok());
      CHECK(again.error().message() == out.message);
      CHECK(parser.failed());
      return out;
    }
    REQUIRE(*used <= n);
    // Only the end of the header leaves bytes of a piece behind.
    if (*used < n) CHECK(parser.done());
    pos += *used;
  }
  out.done = parser.done();
  if (out.done) {
    out.header = parser.header();
    out.consumed = pos;
    CHECK(out.consumed == out.header.size);
    // Done takes nothing more.
    auto more = parser.feed(in.subspan(pos));
    CHECK(more.ok());
    CHECK(*more == 0);
  }
  return out;
}

Outcome run_whole(std::span<const uint8_t> in) {
  return run(in, [] { return SIZE_MAX; });
}

// The whole input, one byte at a time, cut in two at every position, and random splits: all the
// same outcome.
Outcome run_every_split(const Bytes& in) {
  const Outcome whole = run_whole(in);
  check_same(run(in, [] { return size_t{1}; }), whole);
  for (size_t cut = 1; cut < in.size(); ++cut) {
    bool first = true;
    CAPTURE(cut);
    check_same(run(in,
                   [&first, cut] {
                     const size_t n = first ? cut : SIZE_MAX;
                     first = false;
                     return n;
                   }),
               whole);
  }
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    std::mt19937 rng(seed);
    check_same(run(in, [&rng] { return std::uniform_int_distribution<size_t>(1, 40)(rng); }), whole);
  }
  return whole;
}

Endpoint endpoint(std::string_view address, uint16_t port) {
  auto a = address.find(':') != std::string_view::npos ? parse_ipv6(address) : parse_ipv4(address);
  REQUIRE(a.has_value());
  return Endpoint{*a, port};
}

// Checks a header that must be accepted, and that what follows it is left for the application.
ProxyHeader accepted(const Bytes& in, const Bytes& application) {
  const Outcome o = run_every_split(in);
  REQUIRE_MESSAGE(o.done, o.message);
  REQUIRE(o.consumed + application.size() == in.size());
  CHECK(Bytes(in.begin() + static_cast<std::ptrdiff_t>(o.consumed), in.end()) == application);
  return o.header;
}

}  // namespace

TEST_CASE("haproxy send-proxy (v1): TCP4, TCP6, an IPv4 client on a dual-stack listener, a health check") {
  SUBCASE("TCP4, then an RTMP handshake") {
    const ProxyHeader h = accepted(bytes_of(kHaproxyV1Tcp4Rtmp), kRtmpFirst);
    CHECK(h.version == 1);
    CHECK(h.kind == ProxyKind::Proxied);
    CHECK(h.size == 44);
    CHECK(h.source == endpoint("127.0.0.1", 19450));
    CHECK(h.destination == endpoint("127.0.0.1", 19400));
    REQUIRE(h.client() != nullptr);
    CHECK(h.client()->to_string() == "127.0.0.1:19450");
    CHECK(h.source.address.raw().size() == 4);
  }
  SUBCASE("TCP6, then an HTTP request") {
    const ProxyHeader h = accepted(bytes_of(kHaproxyV1Tcp6Http), bytes_of(kHttpFirst));
    CHECK(h.kind == ProxyKind::Proxied);
    CHECK(h.source == endpoint("::1", 19451));
    CHECK(h.destination == endpoint("::1", 19401));
    CHECK(h.source.to_string() == "[::1]:19451");
    CHECK(h.source.address.raw().size() == 16);
  }
  SUBCASE("TCP6 with IPv4-mapped addresses") {
    const ProxyHeader h = accepted(bytes_of(kHaproxyV1MappedHttp), bytes_of(kHttpFirst));
    CHECK(h.kind == ProxyKind::Proxied);
    CHECK(h.source.address.v6);
    CHECK(h.source.to_string() == "[::ffff:127.0.0.1]:19452");
    CHECK(h.destination.port == 19402);
  }
  SUBCASE("check-send-proxy: the check connection's own addresses") {
    const ProxyHeader h = accepted(bytes_of(kHaproxyV1Check), {});
    CHECK(h.kind == ProxyKind::Proxied);
    CHECK(h.source == endpoint("127.0.0.1", 19423));
    CHECK(h.destination == endpoint("127.0.0.1", 19421));
  }
}

TEST_CASE("haproxy send-proxy-v2: TCP over IPv4 and IPv6, TLVs, LOCAL health check") {
  SUBCASE("TCP over IPv4, then an RTMP handshake") {
    const ProxyHeader h = accepted(bytes_of(kHaproxyV2Tcp4Rtmp), kRtmpFirst);
    CHECK(h.version == 2);
    CHECK(h.kind == ProxyKind::Proxied);
    CHECK(h.size == 28);
    CHECK(h.source == endpoint("127.0.0.1", 19453));
    CHECK(h.destination == endpoint("127.0.0.1", 19403));
    CHECK(h.tlv_count == 0);
  }
  SUBCASE("TCP over IPv6, then an HTTP request") {
    const ProxyHeader h = accepted(bytes_of(kHaproxyV2Tcp6Http), bytes_of(kHttpFirst));
    CHECK(h.kind == ProxyKind::Proxied);
    CHECK(h.size == 52);
    CHECK(h.source == endpoint("::1", 19454));
    CHECK(h.destination == endpoint("::1", 19404));
  }
  SUBCASE("crc32c and unique-id TLVs are skipped") {
    const ProxyHeader h = accepted(bytes_of(kHaproxyV2TlvRtmp), kRtmpFirst);
    CHECK(h.kind == ProxyKind::Proxied);
    CHECK(h.size == 16 + 12 + 7 + 34);
    CHECK(h.tlv_count == 2);
    CHECK(h.source == endpoint("127.0.0.1", 19455));
  }
  SUBCASE("check-send-proxy: LOCAL keeps the socket's peer") {
    const ProxyHeader h = accepted(bytes_of(kHaproxyV2CheckLocal), {});
    CHECK(h.kind == ProxyKind::Local);
    CHECK(h.size == 16);
    CHECK(h.client() == nullptr);
  }
}

TEST_CASE("v1 forms haproxy does not send here") {
  SUBCASE("UNKNOWN, short and with ignored fields") {
    CHECK(accepted(bytes_of("PROXY UNKNOWN\r\n"), {}).kind == ProxyKind::Unspecified);
    const ProxyHeader h =
        accepted(concat(bytes_of("PROXY UNKNOWN ffff:f::1 ffff:f::2 65535 65535\r\n"), kRtmpFirst), kRtmpFirst);
    CHECK(h.kind == ProxyKind::Unspecified);
    CHECK(h.client() == nullptr);
  }
  SUBCASE("the longest lines: 56 bytes for TCP4, 104 for TCP6, 107 for UNKNOWN") {
    const ProxyHeader h4 = accepted(bytes_of("PROXY TCP4 255.255.255.255 255.255.255.255 65535 65535\r\n"), {});
    CHECK(h4.size == 56);
    CHECK(h4.source == endpoint("255.255.255.255", 65535));
    const std::string full = "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff";
    const ProxyHeader h6 = accepted(bytes_of("PROXY TCP6 " + full + " " + full + " 65535 65535\r\n"), {});
    CHECK(h6.size == 104);
    CHECK(h6.destination.port == 65535);
    CHECK(h6.source.address.to_string() == full);
    const std::string unknown = "PROXY UNKNOWN " + full + " " + full + " 65535 65535\r\n";
    REQUIRE(unknown.size() == 107);
    CHECK(accepted(concat(bytes_of(unknown), bytes_of(kHttpFirst)), bytes_of(kHttpFirst)).size == 107);
  }
  SUBCASE("a CRLF in the application bytes is not mistaken for the header's") {
    const ProxyHeader h = accepted(bytes_of("PROXY TCP4 10.0.0.1 10.0.0.2 0 1\r\n\r\n"), bytes_of("\r\n"));
    CHECK(h.source.port == 0);
  }
}

TEST_CASE("v2 forms haproxy does not send here") {
  SUBCASE("TCP over IPv6 with NOOP and AUTHORITY TLVs") {
    const Bytes body = concat(concat(concat(inet6_block(), tlv(0x04, {})), tlv(0x04, Bytes(5, 0))),
                              tlv(0x02, bytes_of("live.example.com")));
    const ProxyHeader h = accepted(concat(v2(0x21, 0x21, body), bytes_of(kHttpFirst)), bytes_of(kHttpFirst));
    CHECK(h.kind == ProxyKind::Proxied);
    CHECK(h.tlv_count == 3);
    CHECK(h.source.to_string() == "[2001:db8::10]:443");
    CHECK(h.destination.to_string() == "[2001:db8::1]:8443");
  }
  SUBCASE("TCP over IPv4 from hand-written bytes") {
    const ProxyHeader h = accepted(concat(v2(0x21, 0x11, kInetBlock), kRtmpFirst), kRtmpFirst);
    CHECK(h.source.to_string() == "192.0.2.10:51234");
    CHECK(h.destination.to_string() == "198.51.100.1:1935");
  }
  SUBCASE("UDP, AF_UNIX and AF_UNSPEC keep the socket's peer") {
    CHECK(accepted(concat(v2(0x21, 0x12, kInetBlock), kRtmpFirst), kRtmpFirst).kind == ProxyKind::Unspecified);
    Bytes unix_block(216, 0);
    std::string_view path = "/run/client.sock";
    std::copy(path.begin(), path.end(), unix_block.begin());
    const ProxyHeader u =
        accepted(concat(v2(0x21, 0x31, concat(unix_block, tlv(0x05, Bytes(8, 'u')))), kRtmpFirst), kRtmpFirst);
    CHECK(u.kind == ProxyKind::Unspecified);
    CHECK(u.tlv_count == 1);
    CHECK(accepted(v2(0x21, 0x00, {}), {}).kind == ProxyKind::Unspecified);
    // With an unspecified family the body's layout is unknown: it is skipped, not walked as TLVs.
    CHECK(accepted(v2(0x21, 0x10, {0xFF}), {}).tlv_count == 0);
  }
  SUBCASE("LOCAL skips any body, whatever its family byte says") {
    CHECK(accepted(concat(v2(0x20, 0x11, kInetBlock), kRtmpFirst), kRtmpFirst).kind == ProxyKind::Local);
    CHECK(accepted(v2(0x20, 0xFF, {1, 2, 3}), {}).kind == ProxyKind::Local);
  }
  SUBCASE("the length cap is inclusive") {
    const Bytes body = concat(kInetBlock, tlv(0x04, Bytes(ProxyHeaderParser::kMaxV2Length - 12 - 3, 0)));
    const ProxyHeader h = accepted(concat(v2(0x21, 0x11, body), kRtmpFirst), kRtmpFirst);
    CHECK(h.size == 16 + ProxyHeaderParser::kMaxV2Length);
  }
}

namespace {

struct Refused {
  const char* name;
  Bytes bytes;
  Errc code;
  const char* reason;  // a part of the message
};

std::vector<Refused> refused_cases() {
  const Bytes sig_prefix(kV2Signature.begin(), kV2Signature.begin() + 7);
  Bytes cap = v2(0x21, 0x11, kInetBlock);
  cap[14] = 0x04;  // length 1025, refused before the body arrives
  cap[15] = 0x01;
  return {
      {"an RTMP handshake", kRtmpFirst, Errc::Malformed, "an RTMP handshake"},
      {"a TLS ClientHello", {0x16, 0x03, 0x01, 0x02, 0x00}, Errc::Malformed, "a TLS handshake"},
      {"an HTTP GET", bytes_of(kHttpFirst), Errc::Malformed, "text such as an HTTP request"},
      {"an HTTP POST", bytes_of("POST /upload HTTP/1.1\r\n"), Errc::Malformed, "starts with \"PO\", not \"PROXY \""},
      {"lower case", bytes_of("proxy TCP4 1.2.3.4 5.6.7.8 1 2\r\n"), Errc::Malformed, "starts with 0x70"},
      {"v2 signature cut short", concat(sig_prefix, bytes_of("GET")), Errc::Malformed,
       "byte 7 is 0x47 where the v2 signature has 0x51"},
      {"v1 without CRLF in 107 bytes", bytes_of("PROXY UNKNOWN " + std::string(93, 'x') + "\r\n"), Errc::LimitExceeded,
       "no CRLF in the first 107 bytes"},
      {"v1 CRLF as bytes 108-109", bytes_of("PROXY UNKNOWN " + std::string(92, 'x') + "\r\n"), Errc::LimitExceeded,
       "no CRLF in the first 107 bytes"},
      {"v1 LF only", bytes_of("PROXY TCP4 1.2.3.4 5.6.7.8 1 2\n"), Errc::Malformed, "LF at byte 30 without a CR"},
      {"v1 CR only", bytes_of("PROXY TCP4 1.2.3.4 5.6.7.8 1 2\rGET"), Errc::Malformed,
       "CR at byte 30 is not followed by LF"},
      {"v1 unknown protocol", bytes_of("PROXY UDP4 1.2.3.4 5.6.7.8 1 2\r\n"), Errc::Malformed,
       "unknown protocol \"UDP4\""},
      {"v1 UNKNOWN glued to more", bytes_of("PROXY UNKNOWNX\r\n"), Errc::Malformed, "unknown protocol \"UNKNOWNX\""},
      {"v1 two spaces", bytes_of("PROXY TCP4 1.2.3.4  5.6.7.8 1 2\r\n"), Errc::Malformed, "an empty field"},
      {"v1 trailing space", bytes_of("PROXY TCP4 1.2.3.4 5.6.7.8 1 2 \r\n"), Errc::Malformed, "more than 4 fields"},
      {"v1 missing port", bytes_of("PROXY TCP4 1.2.3.4 5.6.7.8 1\r\n"), Errc::Malformed, "3 fields after TCP4"},
      {"v1 no fields", bytes_of("PROXY TCP6\r\n"), Errc::Malformed, "0 fields after TCP6"},
      {"v1 IPv6 under TCP4", bytes_of("PROXY TCP4 ::1 ::1 1 2\r\n"), Errc::Malformed,
       "source address \"::1\" is not an IPv4 address"},
      {"v1 IPv4 under TCP6", bytes_of("PROXY TCP6 ::1 1.2.3.4 1 2\r\n"), Errc::Malformed,
       "destination address \"1.2.3.4\" is not an IPv6 address"},
      {"v1 octal-looking octet", bytes_of("PROXY TCP4 192.0.2.010 5.6.7.8 1 2\r\n"), Errc::Malformed,
       "source address \"192.0.2.010\""},
      {"v1 octet over 255", bytes_of("PROXY TCP4 1.2.3.256 5.6.7.8 1 2\r\n"), Errc::Malformed, "source address"},
      {"v1 host name", bytes_of("PROXY TCP4 localhost 5.6.7.8 1 2\r\n"), Errc::Malformed, "source address"},
      {"v1 zone id", bytes_of("PROXY TCP6 fe80::1%eth0 ::1 1 2\r\n"), Errc::Malformed, "source address"},
      {"v1 port 65536", bytes_of("PROXY TCP4 1.2.3.4 5.6.7.8 65536 2\r\n"), Errc::Malformed,
       "source port \"65536\" is not 0-65535"},
      {"v1 port with a sign", bytes_of("PROXY TCP4 1.2.3.4 5.6.7.8 +1 2\r\n"), Errc::Malformed, "source port \"+1\""},
      {"v1 negative port", bytes_of("PROXY TCP4 1.2.3.4 5.6.7.8 1 -2\r\n"), Errc::Malformed, "destination port \"-2\""},
      {"v1 port with a leading zero", bytes_of("PROXY TCP4 1.2.3.4 5.6.7.8 01 2\r\n"), Errc::Malformed,
       "source port \"01\""},
      {"v1 hex port", bytes_of("PROXY TCP4 1.2.3.4 5.6.7.8 0x10 2\r\n"), Errc::Malformed, "source port \"0x10\""},
      {"v1 NUL in an address", bytes_of(std::string_view("PROXY TCP4 1.2.3.4\0 5.6.7.8 1 2\r\n", 33)), Errc::Malformed,
       "source address \"1.2.3.4\\x00\""},
      {"v2 version 1", v2(0x11, 0x11, kInetBlock), Errc::Malformed, "version 1 (byte 12 = 0x11), only 2 exists"},
      {"v2 version 3", v2(0x31, 0x11, kInetBlock), Errc::Malformed, "version 3"},
      {"v2 command 2", v2(0x22, 0x11, kInetBlock), Errc::Malformed, "unknown command 2"},
      {"v2 command 15", v2(0x2F, 0x11, kInetBlock), Errc::Malformed, "unknown command 15"},
      {"v2 family 4", v2(0x21, 0x41, kInetBlock), Errc::Malformed, "unknown address family 4"},
      {"v2 transport 3", v2(0x21, 0x13, kInetBlock), Errc::Malformed, "unknown transport 3"},
      {"v2 length over the cap", cap, Errc::LimitExceeded, "header length 1025 is over the 1024 bytes"},
      {"v2 length 65535", concat(kV2Signature, {0x21, 0x11, 0xFF, 0xFF}), Errc::LimitExceeded, "header length 65535"},
      {"v2 IPv6 length with an IPv4 block", v2(0x21, 0x21, kInetBlock), Errc::Malformed,
       "length 12 is shorter than the 36-byte IPv6 address block"},
      {"v2 IPv4 block cut", v2(0x21, 0x11, Bytes(kInetBlock.begin(), kInetBlock.begin() + 8)), Errc::Malformed,
       "shorter than the 12-byte IPv4 address block"},
      {"v2 AF_UNIX block cut", v2(0x21, 0x31, Bytes(100, 0)), Errc::Malformed, "216-byte AF_UNIX address block"},
      {"v2 TLV past the end", v2(0x21, 0x11, concat(kInetBlock, {0x05, 0x00, 0x10, 'a', 'b', 'c'})), Errc::Malformed,
       "TLV type 0x05 at byte 28 has 16 value bytes, past the end of the header"},
      {"v2 half a TLV header", v2(0x21, 0x11, concat(kInetBlock, {0x04, 0x00})), Errc::Malformed,
       "2 bytes at the end of the header are too few for a TLV"},
  };
}

}  // namespace

TEST_CASE("malformed headers are refused, with their reason, however the bytes arrive") {
  for (const Refused& r : refused_cases()) {
    CAPTURE(r.name);
    const Outcome o = run_every_split(r.bytes);
    CHECK(o.failed);
    CHECK(o.code == r.code);
    CHECK_MESSAGE(o.message.find(r.reason) != std::string::npos, o.message);
  }
}

TEST_CASE("a wrong header is refused at its first wrong byte, not after waiting for more") {
  auto fails_after = [](const Bytes& prefix) {
    ProxyHeaderParser p;
    auto r = p.feed(prefix);
    return !r.ok() && p.failed();
  };
  CHECK(fails_after({0x03}));
  CHECK(fails_after(bytes_of("PRO\x01")));
  CHECK(fails_after(concat(kV2Signature, {0x11})));
  CHECK(fails_after(concat(kV2Signature, {0x21, 0x51})));
  CHECK(fails_after(concat(kV2Signature, {0x21, 0x11, 0xFF, 0xFF})));
  // An incomplete but so far valid header waits.
  ProxyHeaderParser p;
  CHECK(*p.feed(bytes_of("PROXY TCP4 1.2.3.4 5.6.7.8 1 2\r")) == 31);
  CHECK(!p.done());
  CHECK(!p.failed());
  CHECK(*p.feed(concat(bytes_of("\n"), kRtmpFirst)) == 1);
  CHECK(p.done());
}

TEST_CASE("looks_like_proxy_header, for the message of a listener that does not expect one") {
  CHECK(looks_like_proxy_header(bytes_of(kHaproxyV1Tcp4Rtmp)));
  CHECK(looks_like_proxy_header(bytes_of(kHaproxyV2Tcp4Rtmp)));
  CHECK(looks_like_proxy_header(bytes_of("PRO")));
  CHECK(looks_like_proxy_header(Bytes(kV2Signature.begin(), kV2Signature.begin() + 5)));
  CHECK(!looks_like_proxy_header(kRtmpFirst));
  CHECK(!looks_like_proxy_header(bytes_of(kHttpFirst)));
  CHECK(!looks_like_proxy_header(bytes_of("POST")));
  CHECK(!looks_like_proxy_header({}));
}

namespace {

// glibc's verdict and bytes for an address, for comparison.
std::optional<IpAddress> glibc_parse(const std::string& text, bool v6) {
  IpAddress a;
  a.v6 = v6;
  if (inet_pton(v6 ? AF_INET6 : AF_INET, text.c_str(), a.bytes.data()) != 1) return std::nullopt;
  return a;
}

std::string glibc_format(const IpAddress& a) {
  char buf[INET6_ADDRSTRLEN];
  REQUIRE(inet_ntop(a.v6 ? AF_INET6 : AF_INET, a.bytes.data(), buf, sizeof buf) != nullptr);
  return buf;
}

// glibc prints the deprecated IPv4-compatible addresses (::/96 but :: and ::1) as "::1.2.3.4";
// the canonical form (docs/proxy_protocol.md) prints them in hex. Everything else must match.
bool ipv4_compatible(const IpAddress& a) {
  if (!std::all_of(a.bytes.begin(), a.bytes.begin() + 12, [](uint8_t b) { return b == 0; })) return false;
  return !std::all_of(a.bytes.begin() + 12, a.bytes.begin() + 15, [](uint8_t b) { return b == 0; }) || a.bytes[15] > 1;
}

}  // namespace

TEST_CASE("IPv4 and IPv6 text: accepted and refused exactly as inet_pton does") {
  const std::vector<std::string> v4 = {"0.0.0.0",  "1.2.3.4",    "255.255.255.255", "192.0.2.10", "01.2.3.4",
                                       "1.2.3.04", "1.2.3.00",   "256.1.1.1",       "1.2.3",      "1.2.3.4.5",
                                       "1.2.3.4.", ".1.2.3.4",   "1..2.3",          "1.2.3.4 ",   " 1.2.3.4",
                                       "1.2.3.-4", "1.2.3.+4",   "0x1.2.3.4",       "1.2.3.4/8",  "",
                                       ".",        "1234.1.1.1", "1.2.3.1000",      "::1",        "a.b.c.d"};
  for (const std::string& s : v4) {
    CAPTURE(s);
    CHECK(parse_ipv4(s) == glibc_parse(s, false));
  }
  const std::vector<std::string> v6 = {"::",
                                       "::1",
                                       "1::",
                                       "2001:db8::1",
                                       "2001:DB8::A",
                                       "1:2:3:4:5:6:7:8",
                                       "1:2:3:4:5:6:7::",
                                       "::2:3:4:5:6:7:8",
                                       "1::3:4:5:6:7:8",
                                       "1:2:3:4:5:6:7:8::",
                                       "::1:2:3:4:5:6:7:8",
                                       "1:2:3:4:5:6:7",
                                       "1:2:3:4:5:6:7:8:9",
                                       ":::",
                                       ":1::",
                                       "1::2:",
                                       "1:::2",
                                       "1::2::3",
                                       "12345::",
                                       "0001:0002::",
                                       "::ffff:1.2.3.4",
                                       "::1.2.3.4",
                                       "1:2:3:4:5:6:1.2.3.4",
                                       "1:2:3:4:5:6:7:1.2.3.4",
                                       "::ffff:1.2.3",
                                       "::ffff:01.2.3.4",
                                       "::ffff:1.2.3.4:5",
                                       "1.2.3.4",
                                       "::1.2.3.4.5",
                                       "::12.3.4.5",
                                       "::123.4.5.6",
                                       "::1234.5.6.7",
                                       "::a.2.3.4",
                                       "fe80::1%eth0",
                                       "[::1]",
                                       "::1/128",
                                       "",
                                       ":",
                                       "g::",
                                       "1:2",
                                       "::ffff:255.255.255.255",
                                       "1::1.2.3.4",
                                       ":1.2.3.4",
                                       "1:2:3:4:5:6:7:8:",
                                       "::0:0",
                                       "0:0:0:0:0:0:0:0"};
  for (const std::string& s : v6) {
    CAPTURE(s);
    CHECK(parse_ipv6(s) == glibc_parse(s, true));
  }
}

TEST_CASE("IPv4 and IPv6 printing matches inet_ntop and reads back") {
  std::vector<IpAddress> all;
  for (const char* s : {"::", "::1", "1::", "2001:db8::1", "2001:db8:0:0:1:0:0:1", "2001:0:0:1:0:0:0:1",
                        "1:0:1:0:1:0:1:0", "0:1:0:0:1:0:0:0", "::ffff:1.2.3.4", "::ffff:0:0", "::ffff:0:1.2.3.4",
                        "64:ff9b::1.2.3.4", "fe80::abcd:ef01", "1:2:3:4:5:6:7:8", "::2", "::1.2.3.4"}) {
    all.push_back(*parse_ipv6(s));
  }
  std::mt19937 rng(7);
  for (int i = 0; i < 2000; ++i) {
    IpAddress a;
    a.v6 = i % 4 != 0;
    // Groups are often zero so that runs of every length and position come up.
    for (size_t g = 0; g < (a.v6 ? 8u : 2u); ++g) {
      if (rng() % 2 == 0) continue;
      a.bytes[2 * g] = static_cast<uint8_t>(rng() % 3 == 0 ? rng() : 0);
      a.bytes[2 * g + 1] = static_cast<uint8_t>(rng());
    }
    all.push_back(a);
  }
  for (const IpAddress& a : all) {
    const std::string text = a.to_string();
    CAPTURE(text);
    if (!ipv4_compatible(a) || !a.v6) CHECK(text == glibc_format(a));
    CHECK((a.v6 ? parse_ipv6(text) : parse_ipv4(text)) == a);
  }
  CHECK(parse_ipv6("::2")->to_string() == "::2");
  CHECK(parse_ipv6("::1.2.3.4")->to_string() == "::102:304");
  CHECK(parse_ipv6("2001:DB8:0:0:0:0:0:1")->to_string() == "2001:db8::1");
  CHECK(parse_ipv6("1:0:0:2:0:0:0:3")->to_string() == "1:0:0:2::3");
  CHECK(parse_ipv6("1:0:0:2:3:0:0:4")->to_string() == "1::2:3:0:0:4");
  CHECK(parse_ipv6("1:0:2:3:4:5:6:7")->to_string() == "1:0:2:3:4:5:6:7");
}
