#include "bench/load/http_url.hpp"

#include <charconv>

#include "bench/load/resolve.hpp"

namespace sluice::bench {

Result<HttpUrl> parse_http_url(std::string_view text) {
  constexpr std::string_view kScheme = "http://";
  HttpUrl u;
  u.text = std::string(text);
  if (text.substr(0, kScheme.size()) != kScheme) return Error(Errc::Config, "not an http:// URL: " + u.text);
  std::string_view rest = text.substr(kScheme.size());
  const size_t slash = rest.find_first_of("/?");
  std::string_view authority = rest.substr(0, slash);
  u.path = slash == std::string_view::npos ? "/" : std::string(rest.substr(slash));
  if (u.path.front() == '?') u.path.insert(0, "/");
  if (authority.find('@') != std::string_view::npos)
    return Error(Errc::Config, "user info in URL is not supported: " + u.text);
  for (char c : u.path) {
    if (static_cast<unsigned char>(c) <= ' ' || c == 0x7f)
      return Error(Errc::Config, "space or control byte in URL: " + u.text);
  }
  if (const size_t hash = u.path.find('#'); hash != std::string::npos) u.path.resize(hash);

  // [v6]:port, host:port or host.
  std::string_view port_text;
  if (!authority.empty() && authority.front() == '[') {
    const size_t close = authority.find(']');
    if (close == std::string_view::npos) return Error(Errc::Config, "unbalanced '[' in URL: " + u.text);
    u.host = std::string(authority.substr(1, close - 1));
    if (close + 1 < authority.size()) {
      if (authority[close + 1] != ':') return Error(Errc::Config, "bad authority in URL: " + u.text);
      port_text = authority.substr(close + 2);
      if (port_text.empty()) return Error(Errc::Config, "bad port in URL: " + u.text);
    }
  } else {
    const size_t colon = authority.rfind(':');
    u.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) {
      port_text = authority.substr(colon + 1);
      if (port_text.empty()) return Error(Errc::Config, "bad port in URL: " + u.text);
    }
  }
  if (u.host.empty()) return Error(Errc::Config, "no host in URL: " + u.text);
  if (!port_text.empty()) {
    unsigned port = 0;
    auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
    if (ec != std::errc() || end != port_text.data() + port_text.size() || port == 0 || port > 65535)
      return Error(Errc::Config, "bad port in URL: " + u.text);
    u.port = static_cast<uint16_t>(port);
  }
  const bool v6 = u.host.find(':') != std::string::npos;
  u.host_header = v6 ? "[" + u.host + "]" : u.host;
  if (u.port != 80) u.host_header += ":" + std::to_string(u.port);

  if (auto r = resolve_host(u.host, u.port, SOCK_STREAM, u.addr); !r) return r.error();
  return u;
}

}  // namespace sluice::bench
