#include "config/address.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <charconv>
#include <cstring>

namespace sluice::config {

namespace {

// inet_pton needs a NUL-terminated string; config text is short, so a std::string is fine.
bool parse_ipv4(std::string_view text, uint8_t out[4]) {
  std::string s(text);
  return inet_pton(AF_INET, s.c_str(), out) == 1;
}

bool parse_ipv6(std::string_view text, uint8_t out[16]) {
  std::string s(text);
  return inet_pton(AF_INET6, s.c_str(), out) == 1;
}

std::string format_ip(const uint8_t* bytes, bool ipv6) {
  char buf[INET6_ADDRSTRLEN] = {};
  inet_ntop(ipv6 ? AF_INET6 : AF_INET, bytes, buf, sizeof buf);
  return buf;
}

bool prefix_matches(const uint8_t* network, const uint8_t* peer, unsigned prefix) {
  unsigned full = prefix / 8;
  if (std::memcmp(network, peer, full) != 0) return false;
  unsigned rest = prefix % 8;
  if (rest == 0) return true;
  uint8_t mask = static_cast<uint8_t>(0xFF << (8 - rest));
  return (network[full] & mask) == (peer[full] & mask);
}

constexpr uint8_t kV4MappedPrefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF};

}  // namespace

std::string ListenAddress::to_string() const {
  if (is_ipv6()) return "[" + host + "]:" + std::to_string(port);
  return host + ":" + std::to_string(port);
}

Result<ListenAddress> parse_listen_address(std::string_view text) {
  auto fail = [&](std::string why) { return Error(Errc::Config, std::move(why)); };
  if (text.empty()) return fail("empty address (expected host:port, e.g. 0.0.0.0:1935)");

  std::string_view host;
  std::string_view port_text;
  if (text.front() == '[') {
    size_t close = text.find(']');
    if (close == std::string_view::npos) return fail("missing ']' in \"" + std::string(text) + "\"");
    host = text.substr(1, close - 1);
    std::string_view rest = text.substr(close + 1);
    if (rest.size() < 2 || rest.front() != ':') {
      return fail("expected [address]:port (got \"" + std::string(text) + "\")");
    }
    port_text = rest.substr(1);
    uint8_t bytes[16];
    if (!parse_ipv6(host, bytes)) return fail("not an IPv6 address: \"" + std::string(host) + "\"");
  } else {
    size_t colon = text.rfind(':');
    if (colon == std::string_view::npos) {
      port_text = text;  // A bare port.
    } else {
      host = text.substr(0, colon);
      port_text = text.substr(colon + 1);
      if (host.find(':') != std::string_view::npos) {
        return fail("IPv6 addresses need brackets: \"[" + std::string(host) + "]:" + std::string(port_text) + "\"");
      }
    }
    if (!host.empty()) {
      uint8_t bytes[4];
      if (!parse_ipv4(host, bytes)) {
        return fail("not a numeric IP address: \"" + std::string(host) +
                    "\" (use 0.0.0.0 for all IPv4 interfaces, [::] for IPv6, or a literal address)");
      }
    }
  }

  unsigned port = 0;
  auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (port_text.empty() || ec != std::errc() || end != port_text.data() + port_text.size() || port > 65535) {
    return fail("bad port \"" + std::string(port_text) + "\" in \"" + std::string(text) + "\" (expected 0..65535)");
  }
  ListenAddress out;
  out.host = host.empty() ? "0.0.0.0" : std::string(host);
  out.port = static_cast<uint16_t>(port);
  // Canonical spelling, so "[0::0]" and "[::]" compare equal.
  if (out.is_ipv6()) {
    uint8_t bytes[16];
    parse_ipv6(out.host, bytes);
    out.host = format_ip(bytes, true);
  }
  return out;
}

Cidr Cidr::loopback_v4() {
  Cidr c;
  c.address[0] = 127;
  c.address[3] = 1;
  c.prefix = 32;
  return c;
}

Cidr Cidr::loopback_v6() {
  Cidr c;
  c.address[15] = 1;
  c.prefix = 128;
  c.ipv6 = true;
  return c;
}

bool Cidr::contains(std::span<const uint8_t> peer) const {
  if (peer.size() == 4) {
    if (!ipv6) return prefix_matches(address.data(), peer.data(), prefix);
    uint8_t mapped[16];
    std::memcpy(mapped, kV4MappedPrefix, 12);
    std::memcpy(mapped + 12, peer.data(), 4);
    return prefix_matches(address.data(), mapped, prefix);
  }
  if (peer.size() == 16) {
    if (ipv6) return prefix_matches(address.data(), peer.data(), prefix);
    if (std::memcmp(peer.data(), kV4MappedPrefix, 12) != 0) return false;
    return prefix_matches(address.data(), peer.data() + 12, prefix);
  }
  return false;
}

std::string Cidr::to_string() const { return format_ip(address.data(), ipv6) + "/" + std::to_string(prefix); }

Result<Cidr> parse_cidr(std::string_view text) {
  auto fail = [&](std::string why) { return Error(Errc::Config, std::move(why)); };
  std::string_view addr = text;
  std::string_view prefix_text;
  size_t slash = text.find('/');
  if (slash != std::string_view::npos) {
    addr = text.substr(0, slash);
    prefix_text = text.substr(slash + 1);
  }
  Cidr c;
  if (parse_ipv4(addr, c.address.data())) {
    c.ipv6 = false;
  } else if (parse_ipv6(addr, c.address.data())) {
    c.ipv6 = true;
  } else {
    return fail("not a CIDR block: \"" + std::string(text) + "\" (expected e.g. 10.0.0.0/8 or ::1/128)");
  }
  unsigned max_prefix = c.ipv6 ? 128 : 32;
  unsigned prefix = max_prefix;
  if (slash != std::string_view::npos) {
    auto [end, ec] = std::from_chars(prefix_text.data(), prefix_text.data() + prefix_text.size(), prefix);
    if (prefix_text.empty() || ec != std::errc() || end != prefix_text.data() + prefix_text.size() ||
        prefix > max_prefix) {
      return fail("bad prefix length in \"" + std::string(text) + "\" (expected 0.." + std::to_string(max_prefix) +
                  ")");
    }
  }
  c.prefix = static_cast<uint8_t>(prefix);

  Cidr masked = c;
  unsigned bytes = c.ipv6 ? 16 : 4;
  for (unsigned i = 0; i < bytes; ++i) {
    unsigned bit = i * 8;
    if (bit >= prefix) {
      masked.address[i] = 0;
    } else if (prefix - bit < 8) {
      masked.address[i] &= static_cast<uint8_t>(0xFF << (8 - (prefix - bit)));
    }
  }
  if (masked.address != c.address) {
    return fail("\"" + std::string(text) + "\" has host bits set (did you mean " + masked.to_string() + "?)");
  }
  return c;
}

bool cidr_list_allows(std::span<const Cidr> list, std::span<const uint8_t> peer) {
  if (list.empty()) return true;
  return std::any_of(list.begin(), list.end(), [&](const Cidr& c) { return c.contains(peer); });
}

}  // namespace sluice::config
