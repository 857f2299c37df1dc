// Relay URLs (server/relay/relay_url.hpp) and their load-time check (config::relay_url_problem in
// config/relay_schema.hpp) on arbitrary bytes. Properties: no crash; an srt:// URL that parses has
// a host, a port other than 0, a stream id of 1..512 bytes, settings in their ranges, a display
// form "srt://host:port" without the query, and is accepted by the config check; an RTMP URL that parses has a
// non-empty host and app, a port other than 0, and a tcUrl that starts with rtmp:// or rtmps://,
// ends in "/" + app and parses back to the same host, port and app; a URL that parses, is visible
// ASCII and at most 2048 bytes is accepted by the config check; stream_name gives the key when
// there is one and only ever replaces "{stream}" (never loops on a local name that holds it).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "config/relay_schema.hpp"
#include "server/relay/relay_url.hpp"

using namespace sluice;
using namespace sluice::server;

namespace {

// The rules the unit test also checks (tests/unit/server/relay/relay_url_test.cpp): what the
// config accepts parses; a host outside brackets holds no ':', '[' or ']'.
constexpr bool kCheckKnownBugs = true;

bool visible_ascii(std::string_view s) {
  for (char c : s) {
    if (static_cast<unsigned char>(c) <= 0x20 || static_cast<unsigned char>(c) >= 0x7f) return false;
  }
  return true;
}

void check_srt(std::string_view in, const RelayUrl& u) {
  if (!in.starts_with("srt://") || u.host.empty() || u.port == 0) std::abort();
  if (u.stream_id.empty() || u.stream_id.size() > 512) std::abort();
  if (!u.passphrase.empty() && (u.passphrase.size() < 10 || u.passphrase.size() > 79)) std::abort();
  if (u.latency_ms != 0 && (u.latency_ms < 20 || u.latency_ms > 10'000)) std::abort();
  if (u.pbkeylen != 0 && u.pbkeylen != 16 && u.pbkeylen != 24 && u.pbkeylen != 32) std::abort();
  const std::string shown = u.display();
  if (!shown.starts_with("srt://") || shown.find('?') != std::string::npos ||
      !shown.ends_with(":" + std::to_string(u.port))) {
    std::abort();
  }
  if (visible_ascii(in) && in.size() <= 2048 && !config::relay_url_problem(in).empty()) std::abort();
  if (u.stream_name("local", "key") != "key") std::abort();
  if (u.stream_id.find("{stream}") == std::string::npos && u.stream_name("local") != u.stream_id) std::abort();
  (void)u.stream_name(in.substr(0, 64));
}

void check_parsed(std::string_view in, const RelayUrl& u) {
  if (u.srt) return check_srt(in, u);
  if (u.host.empty() || u.app.empty() || u.port == 0) std::abort();
  std::string_view tc = u.tc_url;
  if (!(u.tls ? tc.starts_with("rtmps://") : tc.starts_with("rtmp://"))) std::abort();
  if (!tc.ends_with("/" + u.app)) std::abort();
  // A host outside brackets with ':', '[' or ']' is the second known bug above.
  const bool bracketed = in.substr(u.tls ? 8 : 7).starts_with('[');
  const bool odd_host =
      u.host.find_first_of("[]") != std::string::npos || (!bracketed && u.host.find(':') != std::string::npos);
  if (odd_host && kCheckKnownBugs) std::abort();
  if (!odd_host) {
    // The tcUrl is the URL without its name: it must read back as the same place.
    auto again = RelayUrl::parse(tc);
    if (!again || again->host != u.host || again->port != u.port || again->app != u.app || again->tls != u.tls ||
        !again->name.empty() || again->tc_url != u.tc_url) {
      std::abort();
    }
  }
  if (visible_ascii(in) && in.size() <= 2048 && !config::relay_url_problem(in).empty()) std::abort();

  if (u.stream_name("local", "key") != "key") std::abort();
  if (u.name.empty() && u.stream_name("local") != "local") std::abort();
  // Without a placeholder the name is used as written.
  if (u.name.find("{stream}") == std::string::npos && !u.name.empty() && u.stream_name("local") != u.name) {
    std::abort();
  }
  // A local name that is itself the placeholder gives the name back unchanged.
  if (!u.name.empty() && u.stream_name("{stream}") != u.name) std::abort();
  // Any local name, bounded so that many placeholders stay cheap.
  (void)u.stream_name(in.substr(0, 64));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  const std::string problem = config::relay_url_problem(in);
  auto u = RelayUrl::parse(in);
  if (u) check_parsed(in, *u);
  if (kCheckKnownBugs && problem.empty() && !u) std::abort();
  return 0;
}
