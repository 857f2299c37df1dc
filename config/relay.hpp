// apps.NAME.push / pull and type: edge: the server as an RTMP(S) client of other servers
// (docs/relays.md). Plain settings; the URLs are checked when the config loads.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "config/access.hpp"

namespace sluice::config {

// One restream target: every published stream of the app (or those named in `streams`) is
// published to `url` as long as it is live, reconnecting after failures.
struct PushTargetConfig {
  // rtmp://host[:port]/app[/instance][/name] or rtmps://... The name published there is, in
  // order: the key (a platform's stream key), the URL's name part, or the local stream's name.
  std::string url;
  Secret key;                        // key, key_file or key_env
  std::vector<std::string> streams;  // which local names; every name when empty
  bool verify = true;                // rtmps: check the target's certificate and host name
  bool operator==(const PushTargetConfig&) const = default;
};

// Streams of this app come from upstream servers, tried in order (the next on failure). An
// upstream URL names the app; the stream's own name is appended, or replaces "{stream}".
struct PullConfig {
  std::vector<std::string> upstreams;
  bool on_demand = true;                  // started by the first player; else always on for `streams`
  std::chrono::milliseconds idle{10000};  // on demand: stopped this long after the last player left
  std::vector<std::string> streams;       // always on: these names; on demand: only these (all when empty)
  bool verify = true;
  bool enabled() const { return !upstreams.empty(); }
  bool operator==(const PullConfig&) const = default;
};

// Why an rtmp://, rtmps:// or srt:// relay URL is not usable (for the config, the API, the on_publish hook);
// empty when it is.
std::string relay_url_problem(std::string_view url);

struct RelayConfig {
  std::vector<PushTargetConfig> push;
  PullConfig pull;
  // type: edge: pull is on demand from `origins` (pull.upstreams), and a publish on the edge is
  // forwarded to the first origin that takes it.
  bool edge = false;
  bool operator==(const RelayConfig&) const = default;
};

}  // namespace sluice::config
