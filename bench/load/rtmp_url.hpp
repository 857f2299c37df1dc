// RtmpUrl: rtmp://host[:port]/app[/instance]/stream (or rtmps://, RTMP over TLS) split the way
// ffmpeg and OBS split it, and resolved once before the loop starts (a load generator must not
// resolve per connection).
#pragma once

#include <sys/socket.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "base/result.hpp"

namespace sluice::bench {

struct RtmpUrl {
  std::string text;  // as given (after "{i}" expansion)
  std::string host;
  uint16_t port = 1935;  // 443 for rtmps://
  bool tls = false;      // rtmps://
  std::string app;       // everything between the host and the last '/': "live", "vod/inst"
  std::string stream;    // after the last '/', query included ("cam1?token=x")
  std::string tc_url;    // rtmp[s]://host:port/app, what connect's tcUrl carries
  sockaddr_storage addr{};
};

// Parses and resolves (blocking getaddrinfo; call before the loop runs).
Result<RtmpUrl> parse_rtmp_url(std::string_view text);

// Replaces every "{i}" with the decimal index.
std::string expand_index(std::string_view pattern, uint32_t index);

}  // namespace sluice::bench
