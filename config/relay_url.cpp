#include "config/relay_url.hpp"

#include <cctype>
#include <charconv>

namespace sluice::config {

std::optional<RelayUrl> RelayUrl::parse(std::string_view url) {
  RelayUrl u;
  std::string_view rest;
  if (url.starts_with("rtmps://")) {
    u.tls = true;
    u.port = 443;
    rest = url.substr(8);
  } else if (url.starts_with("rtmp://")) {
    rest = url.substr(7);
  } else {
    return std::nullopt;
  }
  size_t slash = rest.find('/');
  if (slash == std::string_view::npos || slash == 0) return std::nullopt;
  std::string_view authority = rest.substr(0, slash);
  std::string_view path = rest.substr(slash + 1);
  if (authority.find('@') != std::string_view::npos) return std::nullopt;  // no user info
  std::string_view port_text;
  bool has_port = false;
  if (authority.front() == '[') {
    size_t close = authority.find(']');
    if (close == std::string_view::npos || close == 1) return std::nullopt;
    u.host = std::string(authority.substr(1, close - 1));
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return std::nullopt;
      port_text = after.substr(1);
      has_port = true;
    }
    for (char c : u.host) {
      if (!std::isxdigit(static_cast<unsigned char>(c)) && c != ':' && c != '.') return std::nullopt;
    }
  } else {
    size_t colon = authority.find(':');
    if (colon != std::string_view::npos) {
      port_text = authority.substr(colon + 1);
      authority = authority.substr(0, colon);
      has_port = true;
    }
    u.host = std::string(authority);
    // A name or an IPv4 address; an IPv6 address needs its brackets (else its last ':' would be
    // taken for the port's).
    for (char c : u.host) {
      if (c == '[' || c == ']' || c == '#' || c == '\\') return std::nullopt;
    }
  }
  if (u.host.empty()) return std::nullopt;
  if (has_port) {
    unsigned port = 0;
    auto [p, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
    if (port_text.empty() || ec != std::errc() || p != port_text.data() + port_text.size() || port == 0 ||
        port > 65535) {
      return std::nullopt;
    }
    u.port = static_cast<uint16_t>(port);
  }
  size_t app_end = path.find('/');
  std::string_view app = path.substr(0, app_end);
  if (app.empty() || app.find('?') == 0) return std::nullopt;
  u.app = std::string(app);
  if (app_end != std::string_view::npos) u.name = std::string(path.substr(app_end + 1));
  const bool default_port = u.port == (u.tls ? 443 : 1935);
  std::string host = u.host.find(':') != std::string::npos ? "[" + u.host + "]" : u.host;
  u.tc_url = std::string(u.tls ? "rtmps://" : "rtmp://") + host + (default_port ? "" : ":" + std::to_string(u.port)) +
             "/" + u.app;
  return u;
}

std::string RelayUrl::stream_name(std::string_view local_name, std::string_view key) const {
  if (!key.empty()) return std::string(key);
  if (name.empty()) return std::string(local_name);
  std::string out = name;
  constexpr std::string_view kPlaceholder = "{stream}";
  for (size_t at = out.find(kPlaceholder); at != std::string::npos;
       at = out.find(kPlaceholder, at + local_name.size())) {
    out.replace(at, kPlaceholder.size(), local_name);
  }
  return out;
}

}  // namespace sluice::config
