#include "protocol/proxy_header.hpp"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <utility>

namespace sluice::protocol {
namespace {

constexpr std::string_view kV1Prefix = "PROXY ";
constexpr std::array<uint8_t, 12> kV2Signature = {0x0D, 0x0A, 0x0D, 0x0A, 0x00, 0x0D,
                                                  0x0A, 0x51, 0x55, 0x49, 0x54, 0x0A};

// Byte 13: version in the high nibble (only 2 exists), command in the low one.
constexpr uint8_t kV2Version = 2;
constexpr uint8_t kCommandLocal = 0;
constexpr uint8_t kCommandProxy = 1;
// Byte 14: address family in the high nibble, transport in the low one.
constexpr uint8_t kFamilyUnspec = 0, kFamilyInet = 1, kFamilyInet6 = 2, kFamilyUnix = 3;
constexpr uint8_t kTransportUnspec = 0, kTransportStream = 1, kTransportDgram = 2;
// The address block that starts the v2 body: two addresses, then two ports for IP.
constexpr size_t kBlockInet = 2 * 4 + 2 * 2;
constexpr size_t kBlockInet6 = 2 * 16 + 2 * 2;
constexpr size_t kBlockUnix = 2 * 108;
// A TLV: type (1), length (2, big-endian), value.
constexpr size_t kTlvHeader = 3;
// How much of a peer's text an error message quotes.
constexpr size_t kQuoteMax = 40;

uint16_t load_u16(const uint8_t* p) { return static_cast<uint16_t>(p[0] << 8 | p[1]); }

std::string hex_byte(uint8_t b) {
  constexpr char kDigits[] = "0123456789abcdef";
  return std::string("0x") + kDigits[b >> 4] + kDigits[b & 0xF];
}

// Peer bytes in an error message: printable ASCII as is, the rest as \xNN, cut at kQuoteMax.
std::string quoted(std::string_view text) {
  std::string out = "\"";
  for (size_t i = 0; i < text.size() && i < kQuoteMax; ++i) {
    const auto c = static_cast<uint8_t>(text[i]);
    if (c >= 0x20 && c < 0x7F && c != '"' && c != '\\') {
      out += static_cast<char>(c);
    } else {
      out += "\\x" + hex_byte(c).substr(2);
    }
  }
  if (text.size() > kQuoteMax) out += "...";
  return out + "\"";
}

std::string_view as_text(std::span<const uint8_t> bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

// What the first byte of a connection that should start with a PROXY header looks like, so that
// the log says which side is misconfigured.
std::string describe_first_byte(uint8_t b) {
  std::string what = "no PROXY header: the connection starts with " + hex_byte(b);
  if (b == 0x03) return what + ", an RTMP handshake (the client bypassed the proxy, or the proxy sends no header)";
  if (b == 0x16) return what + ", a TLS handshake (the client bypassed the proxy, or the proxy sends no header)";
  if (b >= 0x20 && b < 0x7F) {
    return what + " (" + quoted(std::string_view(reinterpret_cast<const char*>(&b), 1)) +
           ", text such as an HTTP request)";
  }
  return what;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool parse_v4_bytes(std::string_view text, uint8_t* out) {
  size_t octets = 0;
  unsigned value = 0;
  bool digit_seen = false;
  for (char c : text) {
    if (c >= '0' && c <= '9') {
      // A leading zero is refused: "010" is 8 to some parsers and 10 to others.
      if (digit_seen && value == 0) return false;
      value = value * 10 + static_cast<unsigned>(c - '0');
      if (value > 255) return false;
      digit_seen = true;
    } else if (c == '.' && digit_seen && octets < 3) {
      out[octets++] = static_cast<uint8_t>(value);
      value = 0;
      digit_seen = false;
    } else {
      return false;
    }
  }
  if (!digit_seen || octets != 3) return false;
  out[3] = static_cast<uint8_t>(value);
  return true;
}

// The same acceptance as glibc's inet_pton(AF_INET6), which is what "strict" means for the
// addresses a proxy prints with inet_ntop: groups of 1-4 hex digits, at most one "::" standing for
// at least one zero group, and an optional dotted IPv4 tail in place of the last two groups.
bool parse_v6_bytes(std::string_view text, uint8_t* out) {
  std::array<uint8_t, 16> tmp{};
  size_t len = 0;             // bytes of tmp written
  std::optional<size_t> gap;  // where "::" stands
  size_t pos = 0;
  if (text.empty()) return false;
  if (text[0] == ':') {
    if (text.size() < 2 || text[1] != ':') return false;
    pos = 1;  // the second ':' below opens the gap
  }
  size_t token = pos;  // start of the current group, for a dotted tail
  unsigned value = 0;
  size_t digits = 0;
  while (pos < text.size()) {
    const char c = text[pos++];
    if (const int d = hex_value(c); d >= 0) {
      if (digits == 4) return false;
      value = (value << 4) | static_cast<unsigned>(d);
      ++digits;
      continue;
    }
    if (c == ':') {
      token = pos;
      if (digits == 0) {
        if (gap) return false;
        gap = len;
        continue;
      }
      if (pos == text.size() || len + 2 > tmp.size()) return false;  // a trailing single ':'
      tmp[len++] = static_cast<uint8_t>(value >> 8);
      tmp[len++] = static_cast<uint8_t>(value);
      value = 0;
      digits = 0;
      continue;
    }
    if (c == '.' && len + 4 <= tmp.size() && parse_v4_bytes(text.substr(token), tmp.data() + len)) {
      len += 4;
      digits = 0;
      pos = text.size();
      break;
    }
    return false;
  }
  if (digits > 0) {
    if (len + 2 > tmp.size()) return false;
    tmp[len++] = static_cast<uint8_t>(value >> 8);
    tmp[len++] = static_cast<uint8_t>(value);
  }
  if (gap) {
    if (len == tmp.size()) return false;  // "::" must stand for at least one group
    const size_t tail = len - *gap;
    std::memmove(tmp.data() + tmp.size() - tail, tmp.data() + *gap, tail);
    std::fill(tmp.data() + *gap, tmp.data() + tmp.size() - tail, uint8_t{0});
    len = tmp.size();
  }
  if (len != tmp.size()) return false;
  std::copy(tmp.begin(), tmp.end(), out);
  return true;
}

// A v1 port: 0-65535 in decimal, no sign, no leading zero (octal again), no spaces.
std::optional<uint16_t> parse_port(std::string_view text) {
  if (text.empty() || text.size() > 5 || (text.size() > 1 && text[0] == '0')) return std::nullopt;
  unsigned value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + static_cast<unsigned>(c - '0');
  }
  if (value > 0xFFFF) return std::nullopt;
  return static_cast<uint16_t>(value);
}

std::string to_text(unsigned value, int base = 10) {
  char buf[8];
  auto end = std::to_chars(buf, buf + sizeof buf, value, base).ptr;
  return std::string(buf, end);
}

std::string dotted(const uint8_t* b) {
  return to_text(b[0]) + "." + to_text(b[1]) + "." + to_text(b[2]) + "." + to_text(b[3]);
}

}  // namespace

IpAddress IpAddress::from_v4(std::span<const uint8_t, 4> raw) {
  IpAddress a;
  std::copy(raw.begin(), raw.end(), a.bytes.begin());
  return a;
}

IpAddress IpAddress::from_v6(std::span<const uint8_t, 16> raw) {
  IpAddress a;
  a.v6 = true;
  std::copy(raw.begin(), raw.end(), a.bytes.begin());
  return a;
}

std::string IpAddress::to_string() const {
  if (!v6) return dotted(bytes.data());
  std::array<unsigned, 8> groups{};
  for (size_t i = 0; i < 8; ++i) groups[i] = unsigned{bytes[2 * i]} << 8 | bytes[2 * i + 1];
  // IPv4-mapped addresses (::ffff:0:0/96) keep a dotted tail: that is how a dual-stack listener
  // sees an IPv4 client, and how HAProxy prints it (corpus/proxy_header/haproxy_v1_mapped_http in
  // tests/fuzz/).
  if (std::all_of(groups.begin(), groups.begin() + 5, [](unsigned g) { return g == 0; }) && groups[5] == 0xFFFF) {
    return "::ffff:" + dotted(bytes.data() + 12);
  }
  // The longest run of two or more zero groups becomes "::", the first one on a tie.
  size_t best = 8, best_len = 1, run = 0;
  for (size_t i = 0; i < 8; ++i) {
    run = groups[i] == 0 ? run + 1 : 0;
    if (run > best_len) {
      best = i + 1 - run;
      best_len = run;
    }
  }
  std::string out;
  for (size_t i = 0; i < 8; ++i) {
    if (i == best) {
      out += "::";
      i += best_len - 1;
      continue;
    }
    if (!out.empty() && out.back() != ':') out += ':';
    out += to_text(groups[i], 16);
  }
  return out;
}

std::optional<IpAddress> parse_ipv4(std::string_view text) {
  IpAddress a;
  if (!parse_v4_bytes(text, a.bytes.data())) return std::nullopt;
  return a;
}

std::optional<IpAddress> parse_ipv6(std::string_view text) {
  IpAddress a;
  a.v6 = true;
  if (!parse_v6_bytes(text, a.bytes.data())) return std::nullopt;
  return a;
}

std::string Endpoint::to_string() const {
  if (address.v6) return "[" + address.to_string() + "]:" + to_text(port);
  return address.to_string() + ":" + to_text(port);
}

bool looks_like_proxy_header(std::span<const uint8_t> bytes) {
  if (bytes.empty()) return false;
  const size_t v1 = std::min(bytes.size(), kV1Prefix.size());
  if (as_text(bytes.first(v1)) == kV1Prefix.substr(0, v1)) return true;
  const size_t v2 = std::min(bytes.size(), kV2Signature.size());
  return std::equal(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(v2), kV2Signature.begin());
}

Result<size_t> ProxyHeaderParser::feed(std::span<const uint8_t> in) {
  if (state_ == State::Failed) return error_;
  size_t used = 0;
  while (used < in.size() && state_ != State::Done && state_ != State::Failed) {
    if (state_ == State::V2Body) {
      // The body is only looked at once it is complete, so it is copied in one piece.
      const size_t n = std::min(kV2FixedSize + v2_length_ - buf_.size(), in.size() - used);
      buf_.insert(buf_.end(), in.begin() + static_cast<std::ptrdiff_t>(used),
                  in.begin() + static_cast<std::ptrdiff_t>(used + n));
      used += n;
      if (buf_.size() == kV2FixedSize + v2_length_) finish_v2();
      continue;
    }
    on_byte(in[used++]);
  }
  if (failed()) return error_;
  return used;
}

// Everything before the v2 body goes through here one byte at a time, so each check runs at the
// same byte whatever the reads look like, and the first wrong byte ends the connection.
void ProxyHeaderParser::on_byte(uint8_t b) {
  buf_.push_back(b);
  const size_t n = buf_.size();
  switch (state_) {
    case State::Start:
      if (b == static_cast<uint8_t>(kV1Prefix[0])) {
        state_ = State::V1Prefix;
      } else if (b == kV2Signature[0]) {
        state_ = State::V2Signature;
      } else {
        fail(Error(Errc::Malformed, describe_first_byte(b)));
      }
      return;
    case State::V1Prefix:
      if (b != static_cast<uint8_t>(kV1Prefix[n - 1])) {
        return fail(Error(Errc::Malformed,
                          "no PROXY header: the connection starts with " + quoted(as_text(buf_)) + ", not \"PROXY \""));
      }
      if (n == kV1Prefix.size()) state_ = State::V1Line;
      return;
    case State::V1Line: return on_v1_byte(b);
    case State::V2Signature:
      if (b != kV2Signature[n - 1]) {
        return fail(Error(Errc::Malformed, "no PROXY header: byte " + std::to_string(n - 1) + " is " + hex_byte(b) +
                                               " where the v2 signature has " + hex_byte(kV2Signature[n - 1])));
      }
      if (n == kV2Signature.size()) state_ = State::V2Fixed;
      return;
    case State::V2Fixed:
      if (n == kV2Signature.size() + 1 || n == kV2Signature.size() + 2 || n == kV2FixedSize) on_v2_fixed();
      return;
    case State::V2Body:
    case State::Done:
    case State::Failed: return;
  }
}

void ProxyHeaderParser::on_v1_byte(uint8_t b) {
  const size_t n = buf_.size();
  const bool after_cr = buf_[n - 2] == '\r';
  if (after_cr && b == '\n') return finish_v1();
  // The specification forbids ending the line with anything but CRLF; a CR inside it is wrong too.
  if (after_cr) {
    return fail(Error(Errc::Malformed, "PROXY v1: CR at byte " + std::to_string(n - 2) + " is not followed by LF"));
  }
  if (b == '\n') {
    return fail(Error(Errc::Malformed, "PROXY v1: LF at byte " + std::to_string(n - 1) + " without a CR before it"));
  }
  if (n == kMaxV1Line) {
    fail(Error(Errc::LimitExceeded, "PROXY v1: no CRLF in the first " + std::to_string(kMaxV1Line) + " bytes"));
  }
}

void ProxyHeaderParser::finish_v1() {
  // The line between "PROXY " and CRLF: PROTO [SP SRC SP DST SP SPORT SP DPORT].
  std::string_view line = as_text(buf_);
  line = line.substr(kV1Prefix.size(), line.size() - kV1Prefix.size() - 2);
  const size_t space = line.find(' ');
  const std::string_view proto = line.substr(0, space);
  header_.version = 1;
  if (proto == "UNKNOWN") {
    // Whatever follows UNKNOWN is to be ignored (docs/proxy_protocol.md, "Version 1").
    header_.kind = ProxyKind::Unspecified;
    state_ = State::Done;
    header_.size = buf_.size();
    std::vector<uint8_t>().swap(buf_);
    return;
  }
  if (proto != "TCP4" && proto != "TCP6") {
    return fail(Error(Errc::Malformed, "PROXY v1: unknown protocol " + quoted(proto) + " (TCP4, TCP6 or UNKNOWN)"));
  }
  const bool v6 = proto == "TCP6";
  std::array<std::string_view, 4> fields;
  size_t count = 0;
  std::string_view rest = space == std::string_view::npos ? std::string_view() : line.substr(space + 1);
  while (space != std::string_view::npos) {
    const size_t next = rest.find(' ');
    if (count == fields.size()) {
      return fail(Error(Errc::Malformed, "PROXY v1: more than 4 fields after " + std::string(proto)));
    }
    fields[count++] = rest.substr(0, next);
    if (fields[count - 1].empty()) {
      return fail(Error(Errc::Malformed, "PROXY v1: an empty field (fields are separated by exactly one space)"));
    }
    if (next == std::string_view::npos) break;
    rest = rest.substr(next + 1);
  }
  if (count != fields.size()) {
    return fail(Error(Errc::Malformed, "PROXY v1: " + std::to_string(count) + " fields after " + std::string(proto) +
                                           ", expected 4 (source, destination, source port, destination port)"));
  }
  constexpr std::array<const char*, 2> kWhich = {"source", "destination"};
  std::array<Endpoint*, 2> ends = {&header_.source, &header_.destination};
  for (size_t i = 0; i < 2; ++i) {
    auto address = v6 ? parse_ipv6(fields[i]) : parse_ipv4(fields[i]);
    if (!address) {
      return fail(Error(Errc::Malformed, std::string("PROXY v1: ") + kWhich[i] + " address " + quoted(fields[i]) +
                                             " is not an " + (v6 ? "IPv6" : "IPv4") + " address"));
    }
    auto port = parse_port(fields[2 + i]);
    if (!port) {
      return fail(Error(Errc::Malformed, std::string("PROXY v1: ") + kWhich[i] + " port " + quoted(fields[2 + i]) +
                                             " is not 0-65535 in decimal without leading zeros"));
    }
    ends[i]->address = *address;
    ends[i]->port = *port;
  }
  header_.kind = ProxyKind::Proxied;
  header_.size = buf_.size();
  state_ = State::Done;
  std::vector<uint8_t>().swap(buf_);
}

// Called at bytes 13, 14 and 16 of a v2 header: each is checked as soon as it arrives.
void ProxyHeaderParser::on_v2_fixed() {
  const size_t n = buf_.size();
  const uint8_t ver_cmd = buf_[12];
  const uint8_t command = ver_cmd & 0x0F;
  if (n == 13) {
    if ((ver_cmd >> 4) != kV2Version) {
      return fail(Error(Errc::Malformed, "PROXY v2: version " + std::to_string(ver_cmd >> 4) +
                                             " (byte 12 = " + hex_byte(ver_cmd) + "), only 2 exists"));
    }
    if (command != kCommandLocal && command != kCommandProxy) {
      return fail(Error(Errc::Malformed, "PROXY v2: unknown command " + std::to_string(command) + " (byte 12 = " +
                                             hex_byte(ver_cmd) + "), only LOCAL (0) and PROXY (1) exist"));
    }
    return;
  }
  const uint8_t family = buf_[13] >> 4;
  const uint8_t transport = buf_[13] & 0x0F;
  // LOCAL ignores the family byte altogether (docs/proxy_protocol.md, "Version 2").
  const bool proxy = command == kCommandProxy;
  if (n == 14) {
    if (proxy && family > kFamilyUnix) {
      return fail(Error(Errc::Malformed, "PROXY v2: unknown address family " + std::to_string(family) +
                                             " (byte 13 = " + hex_byte(buf_[13]) + ")"));
    }
    if (proxy && transport > kTransportDgram) {
      return fail(Error(Errc::Malformed, "PROXY v2: unknown transport " + std::to_string(transport) +
                                             " (byte 13 = " + hex_byte(buf_[13]) + ")"));
    }
    return;
  }
  v2_length_ = load_u16(buf_.data() + 14);
  if (v2_length_ > kMaxV2Length) {
    return fail(Error(Errc::LimitExceeded, "PROXY v2: header length " + std::to_string(v2_length_) + " is over the " +
                                               std::to_string(kMaxV2Length) + " bytes this server accepts"));
  }
  if (proxy && family != kFamilyUnspec && transport != kTransportUnspec) {
    const size_t block = family == kFamilyInet ? kBlockInet : family == kFamilyInet6 ? kBlockInet6 : kBlockUnix;
    if (v2_length_ < block) {
      const char* name = family == kFamilyInet ? "IPv4" : family == kFamilyInet6 ? "IPv6" : "AF_UNIX";
      return fail(Error(Errc::Malformed, "PROXY v2: length " + std::to_string(v2_length_) + " is shorter than the " +
                                             std::to_string(block) + "-byte " + name + " address block"));
    }
  }
  if (v2_length_ == 0) return finish_v2();
  buf_.reserve(kV2FixedSize + v2_length_);
  state_ = State::V2Body;
}

void ProxyHeaderParser::finish_v2() {
  const uint8_t command = buf_[12] & 0x0F;
  const uint8_t family = buf_[13] >> 4;
  const uint8_t transport = buf_[13] & 0x0F;
  header_.version = 2;
  header_.kind = ProxyKind::Unspecified;
  if (command == kCommandLocal) {
    // The proxy's own connection: the body (addresses or not) is skipped whole.
    header_.kind = ProxyKind::Local;
  } else if (family != kFamilyUnspec && transport != kTransportUnspec) {
    const uint8_t* body = buf_.data() + kV2FixedSize;
    size_t pos = family == kFamilyInet ? kBlockInet : family == kFamilyInet6 ? kBlockInet6 : kBlockUnix;
    // The TLVs after the address block are skipped, but each must fit inside the header: a
    // length that points past it means the sender and this parser disagree on where the
    // application's bytes begin.
    while (pos < v2_length_) {
      if (v2_length_ - pos < kTlvHeader) {
        return fail(Error(Errc::Malformed, "PROXY v2: " + std::to_string(v2_length_ - pos) +
                                               " bytes at the end of the header are too few for a TLV"));
      }
      const size_t value = load_u16(body + pos + 1);
      if (value > v2_length_ - pos - kTlvHeader) {
        return fail(Error(Errc::Malformed, "PROXY v2: TLV type " + hex_byte(body[pos]) + " at byte " +
                                               std::to_string(kV2FixedSize + pos) + " has " + std::to_string(value) +
                                               " value bytes, past the end of the header"));
      }
      pos += kTlvHeader + value;
      ++header_.tlv_count;
    }
    if (transport == kTransportStream && family != kFamilyUnix) {
      // TCP: the only case whose addresses replace the socket's peer.
      header_.kind = ProxyKind::Proxied;
      if (family == kFamilyInet) {
        header_.source.address = IpAddress::from_v4(std::span<const uint8_t, 4>(body, 4));
        header_.destination.address = IpAddress::from_v4(std::span<const uint8_t, 4>(body + 4, 4));
        header_.source.port = load_u16(body + 8);
        header_.destination.port = load_u16(body + 10);
      } else {
        header_.source.address = IpAddress::from_v6(std::span<const uint8_t, 16>(body, 16));
        header_.destination.address = IpAddress::from_v6(std::span<const uint8_t, 16>(body + 16, 16));
        header_.source.port = load_u16(body + 32);
        header_.destination.port = load_u16(body + 34);
      }
    }
  }
  header_.size = buf_.size();
  state_ = State::Done;
  std::vector<uint8_t>().swap(buf_);
}

void ProxyHeaderParser::fail(Error error) {
  state_ = State::Failed;
  error_ = std::move(error);
  header_ = ProxyHeader{};
  std::vector<uint8_t>().swap(buf_);
}

}  // namespace sluice::protocol
