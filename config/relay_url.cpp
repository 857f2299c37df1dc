#include "config/relay_url.hpp"

#include <cctype>
#include <charconv>

#include "base/percent_decode.hpp"

namespace sluice::config {

namespace {

std::optional<std::string> percent_decoded(std::string_view in) {
  std::string out;
  if (!percent_decode(in, out)) return std::nullopt;
  return out;
}

bool read_number(std::string_view text, uint32_t max, uint32_t& out) {
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return !text.empty() && ec == std::errc() && p == text.data() + text.size() && out <= max;
}

// srt://host:port?query (the authority as for RTMP, a port required, no path).
std::optional<RelayUrl> parse_srt(std::string_view rest) {
  RelayUrl u;
  u.srt = true;
  const size_t q = rest.find('?');
  std::string_view authority = rest.substr(0, q);
  if (!authority.empty() && authority.back() == '/') authority.remove_suffix(1);
  if (authority.empty() || authority.find('/') != std::string_view::npos ||
      authority.find('@') != std::string_view::npos)
    return std::nullopt;
  const size_t colon = authority.rfind(':');
  if (colon == std::string_view::npos || colon == 0) return std::nullopt;
  std::string_view host = authority.substr(0, colon);
  if (host.front() == '[') {
    if (host.size() < 3 || host.back() != ']') return std::nullopt;
    host = host.substr(1, host.size() - 2);
  } else if (host.find(':') != std::string_view::npos) {
    return std::nullopt;  // an IPv6 address needs its brackets
  }
  uint32_t port = 0;
  if (!read_number(authority.substr(colon + 1), 65535, port) || port == 0) return std::nullopt;
  u.host = std::string(host);
  u.port = static_cast<uint16_t>(port);
  std::string_view query = q == std::string_view::npos ? std::string_view() : rest.substr(q + 1);
  while (!query.empty()) {
    const size_t amp = query.find('&');
    std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    const size_t eq = pair.find('=');
    if (eq == std::string_view::npos) return std::nullopt;
    std::string_view key = pair.substr(0, eq), value = pair.substr(eq + 1);
    if (key == "streamid") {
      auto decoded = percent_decoded(value);
      if (!decoded || decoded->empty() || decoded->size() > 512) return std::nullopt;
      u.stream_id = std::move(*decoded);
    } else if (key == "passphrase") {
      auto decoded = percent_decoded(value);
      if (!decoded || decoded->size() < 10 || decoded->size() > 79) return std::nullopt;
      u.passphrase = std::move(*decoded);
    } else if (key == "latency") {
      if (!read_number(value, 10'000, u.latency_ms) || u.latency_ms < 20) return std::nullopt;
    } else if (key == "pbkeylen") {
      if (!read_number(value, 32, u.pbkeylen) || (u.pbkeylen != 16 && u.pbkeylen != 24 && u.pbkeylen != 32))
        return std::nullopt;
    } else {
      return std::nullopt;  // a setting Sluice would silently ignore
    }
  }
  if (u.stream_id.empty()) return std::nullopt;
  const std::string shown = u.host.find(':') != std::string::npos ? "[" + u.host + "]" : u.host;
  u.tc_url = "srt://" + shown + ":" + std::to_string(u.port);
  return u;
}

}  // namespace

std::optional<RelayUrl> RelayUrl::parse(std::string_view url) {
  RelayUrl u;
  std::string_view rest;
  if (url.starts_with("srt://")) return parse_srt(url.substr(6));
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
  if (!srt && name.empty()) return std::string(local_name);
  std::string out = srt ? stream_id : name;
  constexpr std::string_view kPlaceholder = "{stream}";
  for (size_t at = out.find(kPlaceholder); at != std::string::npos;
       at = out.find(kPlaceholder, at + local_name.size())) {
    out.replace(at, kPlaceholder.size(), local_name);
  }
  return out;
}

}  // namespace sluice::config
