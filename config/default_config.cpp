#include "config/default_config.hpp"

namespace sluice::config {

namespace {

// Keep this short: it is a starting point, and docs/configuration.md lists every key. It must
// load without errors (config_test checks it) and serve with no file present.
constexpr std::string_view kDefaultYaml = R"yaml(# Sluice default configuration.
# Save it with `sluice --print-default-config > sluice.yaml`, edit, and start Sluice with that
# file. Every key, its type and its default: docs/configuration.md.

rtmp:
  listen: 0.0.0.0:1935          # address:port, or a list of them; quote IPv6: "[::]:1935"
  chunk_size: 4096

apps:
  # rtmp://host/live/<stream> and http://host:8080/live/<stream>.flv
  live:
    type: live
    gop_cache: true
  # Files under root, played as rtmp://host/vod/<file> (relative to this file's directory,
  # or to the current directory for the built-in default).
  vod:
    type: vod
    root: ./vod

http:
  enabled: true
  listen: 0.0.0.0:8080
  api:
    allow: [127.0.0.1/32, "::1/128"]   # who may read the stats API

log:
  level: info                   # error, warn, info or debug
)yaml";

}  // namespace

std::string_view default_config_yaml() { return kDefaultYaml; }

}  // namespace sluice::config
