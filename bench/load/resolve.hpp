// The address of a bench URL's host and port (rtmp://, http:// and srt:// URLs alike): getaddrinfo,
// the first answer. Called once per URL at start, never on the measured path.
#pragma once

#include <netdb.h>
#include <sys/socket.h>

#include <cstdint>
#include <string>

#include "base/result.hpp"

namespace sluice::bench {

// socktype: SOCK_STREAM (RTMP, HTTP) or SOCK_DGRAM (SRT).
Result<void> resolve_host(const std::string& host, uint16_t port, int socktype, sockaddr_storage& out);

}  // namespace sluice::bench
