// HttpUrl: http://host[:port]/path split and resolved once before the loop starts, like RtmpUrl.
#pragma once

#include <sys/socket.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "base/result.hpp"

namespace sluice::bench {

struct HttpUrl {
  std::string text;  // as given (after "{i}" expansion)
  std::string host;  // without brackets for IPv6
  uint16_t port = 80;
  std::string path;         // request target: "/live/cam.flv?x=1" ("/" when empty)
  std::string host_header;  // what the Host field carries: host, [v6], with ":port" unless 80
  sockaddr_storage addr{};
};

// Parses and resolves (blocking getaddrinfo; call before the loop runs). Only http:// (no TLS).
Result<HttpUrl> parse_http_url(std::string_view text);

}  // namespace sluice::bench
