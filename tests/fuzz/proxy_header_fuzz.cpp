// libFuzzer target for protocol::ProxyHeaderParser and the address parsers of
// protocol/proxy_header.hpp.
//
// Input: the first bytes of a connection, as they are (the seeds in corpus/proxy_header/ are
// captured from haproxy or written by tests/fuzz/proxy_header_seeds.py, and usable unchanged).
// The read splits are drawn from a hash of the input, so a seed needs no extra header.
// Properties checked:
//  - one feed() of everything, one byte at a time and random splits end the same way: done or
//    failed, the same error code and message, the same header, the same consumed count;
//  - never more consumed than given; a done header consumed exactly header.size bytes (a v1 line
//    of at most 107 ending in CRLF; a v2 header of 16 + its length field, at most 16 + 1024), so
//    the application's bytes after it are left whole; done takes nothing more; a failure sticks;
//  - Proxied only with a valid address form: IPv4 or IPv6 as the version says, printed text that
//    reads back to the same bytes, and for v1 the very addresses glibc's inet_pton makes of the
//    line's fields; Local and Unspecified give no client address;
//  - parse_ipv4 / parse_ipv6 accept exactly what inet_pton accepts, with the same bytes, and
//    to_string() prints what inet_ntop prints (but for the deprecated IPv4-compatible addresses,
//    ::/96 other than :: and ::1, which glibc alone prints with a dotted tail).
#include <arpa/inet.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string>
#include <string_view>

#include "protocol/proxy_header.hpp"

using namespace sluice;
using namespace sluice::protocol;

namespace {

void check(bool condition) {
  if (!condition) std::abort();
}

struct Outcome {
  bool done = false;
  bool failed = false;
  Errc code = Errc::Ok;
  std::string message;
  size_t consumed = 0;
  ProxyHeader header;

  bool same(const Outcome& o) const {
    return done == o.done && failed == o.failed && code == o.code && message == o.message && consumed == o.consumed &&
           header.version == o.header.version && header.kind == o.header.kind && header.size == o.header.size &&
           header.source == o.header.source && header.destination == o.header.destination &&
           header.tlv_count == o.header.tlv_count;
  }
};

// Feeds `in` in pieces: all at once (step 0), `step` bytes at a time, or random sizes from `seed`.
Outcome run(std::span<const uint8_t> in, size_t step, uint32_t seed) {
  ProxyHeaderParser parser;
  Outcome out;
  uint32_t rng = seed;
  size_t pos = 0;
  while (pos < in.size() && !parser.done()) {
    size_t n = in.size() - pos;
    if (step != 0) n = std::min(n, step);
    if (seed != 0) {
      rng = rng * 1103515245u + 12345u;
      n = std::min<size_t>(n, 1 + (rng >> 16) % 64);
    }
    auto used = parser.feed(in.subspan(pos, n));
    if (!used) {
      out.failed = true;
      out.code = used.error().code;
      out.message = used.error().message();
      check(parser.failed() && !parser.done());
      auto again = parser.feed(in.subspan(pos));
      check(!again.ok() && again.error().code == out.code && again.error().message() == out.message);
      return out;
    }
    check(*used <= n);
    // Only the end of the header leaves bytes of a piece behind.
    if (*used < n) check(parser.done());
    pos += *used;
  }
  check(pos <= in.size());
  out.done = parser.done();
  if (out.done) {
    out.consumed = pos;
    out.header = parser.header();
    auto more = parser.feed(in.subspan(pos));
    check(more.ok() && *more == 0 && parser.done());
  }
  return out;
}

std::string as_string(std::span<const uint8_t> bytes) { return {bytes.begin(), bytes.end()}; }

bool ipv4_compatible(const IpAddress& a) {
  if (!a.v6 || !std::all_of(a.bytes.begin(), a.bytes.begin() + 12, [](uint8_t b) { return b == 0; })) return false;
  return a.bytes[12] != 0 || a.bytes[13] != 0 || a.bytes[14] != 0 || a.bytes[15] > 1;
}

void check_address_form(const IpAddress& a) {
  const std::string text = a.to_string();
  const auto back = a.v6 ? parse_ipv6(text) : parse_ipv4(text);
  check(back.has_value() && *back == a);
  if (!a.v6) check(std::all_of(a.bytes.begin() + 4, a.bytes.end(), [](uint8_t b) { return b == 0; }));
  check(a.raw().size() == (a.v6 ? 16u : 4u));
  if (!ipv4_compatible(a)) {
    char buf[INET6_ADDRSTRLEN];
    check(inet_ntop(a.v6 ? AF_INET6 : AF_INET, a.bytes.data(), buf, sizeof buf) != nullptr);
    check(text == buf);
  }
}

// What glibc makes of `text` as an address of the family, compared with ours.
void check_against_inet_pton(const std::string& text, bool v6) {
  if (text.find('\0') != std::string::npos) return;  // inet_pton would stop there
  uint8_t theirs[16] = {};
  const bool ok = inet_pton(v6 ? AF_INET6 : AF_INET, text.c_str(), theirs) == 1;
  const auto ours = v6 ? parse_ipv6(text) : parse_ipv4(text);
  check(ok == ours.has_value());
  if (!ok) return;
  check(std::memcmp(ours->bytes.data(), theirs, v6 ? 16 : 4) == 0);
  check_address_form(*ours);
}

void check_header(std::span<const uint8_t> in, const Outcome& o) {
  const ProxyHeader& h = o.header;
  check(o.consumed == h.size && h.size <= in.size());
  if (h.version == 1) {
    check(h.size >= 8 && h.size <= ProxyHeaderParser::kMaxV1Line);
    check(in[h.size - 2] == '\r' && in[h.size - 1] == '\n');
    check(as_string(in.first(6)) == "PROXY ");
    check(h.tlv_count == 0);
  } else {
    check(h.version == 2);
    check(h.size >= ProxyHeaderParser::kV2FixedSize);
    check(h.size == ProxyHeaderParser::kV2FixedSize + (size_t{in[14]} << 8 | in[15]));
    check(h.size <= ProxyHeaderParser::kV2FixedSize + ProxyHeaderParser::kMaxV2Length);
    check((in[12] >> 4) == 2 && (in[12] & 0x0F) <= 1);
  }
  if (h.kind != ProxyKind::Proxied) {
    check(h.client() == nullptr);
    return;
  }
  check(h.client() == &h.source);
  check(h.source.address.v6 == h.destination.address.v6);
  check_address_form(h.source.address);
  check_address_form(h.destination.address);
  if (h.version == 2) {
    check((in[12] & 0x0F) == 1 && (in[13] == 0x11 || in[13] == 0x21));
    check(h.source.address.v6 == (in[13] == 0x21));
    return;
  }
  // v1: the fields of the line, read again by glibc.
  const std::string line = as_string(in.subspan(6, h.size - 8));
  const bool v6 = line.compare(0, 5, "TCP6 ") == 0;
  check(v6 || line.compare(0, 5, "TCP4 ") == 0);
  check(v6 == h.source.address.v6);
  size_t start = 5;
  const IpAddress* addresses[2] = {&h.source.address, &h.destination.address};
  for (const IpAddress* a : addresses) {
    const size_t end = line.find(' ', start);
    check(end != std::string::npos);
    uint8_t theirs[16] = {};
    check(inet_pton(v6 ? AF_INET6 : AF_INET, line.substr(start, end - start).c_str(), theirs) == 1);
    check(std::memcmp(a->bytes.data(), theirs, v6 ? 16 : 4) == 0);
    start = end + 1;
  }
  check(std::to_string(h.source.port) + " " + std::to_string(h.destination.port) == line.substr(start));
}

uint32_t fnv1a(std::span<const uint8_t> in) {
  uint32_t h = 2166136261u;
  for (uint8_t b : in) h = (h ^ b) * 16777619u;
  return h | 1u;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const uint8_t> in(data, size);
  const Outcome whole = run(in, 0, 0);
  check(whole.consumed <= size);
  check(whole.done != whole.failed || (!whole.done && size < 16 + ProxyHeaderParser::kMaxV2Length));
  if (whole.failed) check(whole.code == Errc::Malformed || whole.code == Errc::LimitExceeded);
  if (whole.done) check_header(in, whole);
  check(run(in, 1, 0).same(whole));
  check(run(in, 0, fnv1a(in)).same(whole));

  // The address parsers on the input as text: short inputs, as addresses are.
  if (size <= 64) {
    const std::string text = as_string(in);
    check_against_inet_pton(text, false);
    check_against_inet_pton(text, true);
  }
  return 0;
}
