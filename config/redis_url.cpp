#include <charconv>

#include "config/cluster.hpp"

namespace sluice::config {

namespace {

bool parse_number(std::string_view s, uint64_t max, uint64_t& out) {
  if (s.empty() || s.size() > 10) return false;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size() && out <= max;
}

}  // namespace

std::optional<RedisUrl> RedisUrl::parse(std::string_view text, std::string& why) {
  constexpr std::string_view kScheme = "redis://";
  if (text.starts_with("rediss://")) {
    why = "rediss:// (TLS) is not supported: reach Redis over a private network or a local tunnel";
    return std::nullopt;
  }
  if (!text.starts_with(kScheme)) {
    why = "must start with redis://";
    return std::nullopt;
  }
  std::string_view rest = text.substr(kScheme.size());
  RedisUrl url;
  std::string_view authority = rest.substr(0, rest.find('/'));
  std::string_view path = rest.size() > authority.size() ? rest.substr(authority.size() + 1) : std::string_view{};
  if (size_t at = authority.rfind('@'); at != std::string_view::npos) {
    std::string_view userinfo = authority.substr(0, at);
    authority = authority.substr(at + 1);
    size_t colon = userinfo.find(':');
    url.user = std::string(userinfo.substr(0, colon));
    if (colon != std::string_view::npos) url.password = std::string(userinfo.substr(colon + 1));
  }
  std::string_view host = authority;
  std::string_view port;
  if (authority.starts_with('[')) {
    size_t close = authority.find(']');
    if (close == std::string_view::npos) {
      why = "an IPv6 host needs its closing ]";
      return std::nullopt;
    }
    host = authority.substr(1, close - 1);
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after[0] != ':') {
        why = "only :PORT may follow ]";
        return std::nullopt;
      }
      port = after.substr(1);
    }
  } else if (size_t colon = authority.find(':'); colon != std::string_view::npos) {
    host = authority.substr(0, colon);
    port = authority.substr(colon + 1);
  }
  if (host.empty()) {
    why = "has no host";
    return std::nullopt;
  }
  url.host = std::string(host);
  uint64_t n = 0;
  if (!port.empty() || authority.ends_with(':')) {
    if (!parse_number(port, 65535, n) || n == 0) {
      why = "the port must be 1..65535";
      return std::nullopt;
    }
    url.port = static_cast<uint16_t>(n);
  }
  if (!path.empty()) {
    if (!parse_number(path, 15, n)) {
      why = "the database must be a number 0..15 (redis://HOST:PORT/DB)";
      return std::nullopt;
    }
    url.db = static_cast<uint32_t>(n);
  }
  return url;
}

std::string RedisUrl::display() const {
  std::string h = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  return "redis://" + h + ":" + std::to_string(port) + "/" + std::to_string(db);
}

}  // namespace sluice::config
