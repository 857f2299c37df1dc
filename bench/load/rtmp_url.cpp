#include "bench/load/rtmp_url.hpp"

#include <charconv>

#include "bench/load/resolve.hpp"

namespace sluice::bench {

std::string expand_index(std::string_view pattern, uint32_t index) {
  std::string out;
  const std::string idx = std::to_string(index);
  size_t pos = 0;
  for (;;) {
    const size_t at = pattern.find("{i}", pos);
    if (at == std::string_view::npos) break;
    out.append(pattern.substr(pos, at - pos));
    out += idx;
    pos = at + 3;
  }
  out.append(pattern.substr(pos));
  return out;
}

Result<RtmpUrl> parse_rtmp_url(std::string_view text) {
  RtmpUrl u;
  u.text = std::string(text);
  std::string_view rest;
  if (text.starts_with("rtmp://")) {
    rest = text.substr(7);
  } else if (text.starts_with("rtmps://")) {
    rest = text.substr(8);
    u.tls = true;
    u.port = 443;
  } else {
    return Error(Errc::Config, "not an rtmp:// or rtmps:// URL: " + u.text);
  }
  const size_t slash = rest.find('/');
  if (slash == std::string_view::npos) return Error(Errc::Config, "no application in URL: " + u.text);
  std::string_view authority = rest.substr(0, slash);
  std::string_view path = rest.substr(slash + 1);

  // [v6]:port, host:port or host.
  std::string_view port_text;
  if (!authority.empty() && authority.front() == '[') {
    const size_t close = authority.find(']');
    if (close == std::string_view::npos) return Error(Errc::Config, "unbalanced '[' in URL: " + u.text);
    u.host = std::string(authority.substr(1, close - 1));
    if (close + 1 < authority.size() && authority[close + 1] == ':') port_text = authority.substr(close + 2);
  } else {
    const size_t colon = authority.rfind(':');
    u.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) port_text = authority.substr(colon + 1);
  }
  if (u.host.empty()) return Error(Errc::Config, "no host in URL: " + u.text);
  if (!port_text.empty()) {
    unsigned port = 0;
    auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
    if (ec != std::errc() || end != port_text.data() + port_text.size() || port == 0 || port > 65535)
      return Error(Errc::Config, "bad port in URL: " + u.text);
    u.port = static_cast<uint16_t>(port);
  }

  const size_t last = path.rfind('/');
  if (last == std::string_view::npos || last == 0 || last + 1 == path.size())
    return Error(Errc::Config, "URL needs /app/stream: " + u.text);
  u.app = std::string(path.substr(0, last));
  u.stream = std::string(path.substr(last + 1));
  const bool v6 = u.host.find(':') != std::string::npos;
  u.tc_url = std::string(u.tls ? "rtmps://" : "rtmp://") + (v6 ? "[" + u.host + "]" : u.host) + ":" +
             std::to_string(u.port) + "/" + u.app;

  if (auto r = resolve_host(u.host, u.port, SOCK_STREAM, u.addr); !r) return r.error();
  return u;
}

}  // namespace sluice::bench
