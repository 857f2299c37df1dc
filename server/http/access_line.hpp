// The access log's line of one HTTP request (docs/access_log.md), HTTP-FLV plays and downloads
// included: their request is their session.
#pragma once

#include <cstdint>

#include "server/access_log/access_record.hpp"

namespace sluice::server {

class HttpConnection;

// `request_bytes`: what the connection received since the previous request's line (its head and
// body); `body_bytes`: the response body's bytes, as nginx's $body_bytes_sent.
AccessRecord http_access_record(const HttpConnection& c, int status, uint64_t body_bytes, uint64_t request_bytes,
                                uint64_t duration_ms);

}  // namespace sluice::server
