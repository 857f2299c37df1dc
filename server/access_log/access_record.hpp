// AccessRecord: one line of the access log (docs/access_log.md), for a finished HTTP request or a
// finished RTMP, SRT, WebRTC or HLS session, and how it is written in each format. Pure: no I/O,
// no clock (the record carries its time), unit-tested in
// tests/unit/server/access_log/access_format_test.cpp. The writer is access_log.hpp.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "config/access_log.hpp"

namespace sluice::server {

struct AccessRecord {
  enum class Kind : uint8_t { Http, Session };
  Kind kind = Kind::Http;
  uint64_t conn = 0;   // the connection's id in the server log (conn=...)
  std::string client;  // the peer's address without its port (the PROXY header's when one came)
  // HTTP: the method, the path without the query, "HTTP/1.1". A session: PLAY or PUBLISH, its
  // URL (scheme://host/app/stream), its protocol (RTMP, RTMPS, SRT, WebRTC, HLS).
  std::string method;
  std::string target;
  std::string protocol;
  std::string app;     // a session's; empty for HTTP requests
  std::string stream;  // likewise, without the query
  int status = 0;      // HTTP: the response's; a session: access_session_status() of its reason
  std::string reason;  // why a session ended (json only)
  uint64_t bytes_in = 0;
  uint64_t bytes_out = 0;  // HTTP: the response body's bytes (nginx's $body_bytes_sent)
  uint64_t duration_ms = 0;
  std::string referer;
  std::string user_agent;  // the User-Agent header, RTMP's flashVer
  int64_t unix_ms = 0;     // when it finished (the writer sets it when 0)
};

// The status number a session's end reason is written with (docs/access_log.md has the table):
// 200 an ordinary end, 400 a protocol error, 403 closed by a rule, the API or a hook's lifetime,
// 408 a timeout, 409 replaced by a new publisher, 429 over a limit, 503 the server stopping.
int access_session_status(std::string_view reason);

// "1.2.3.4:5678" -> "1.2.3.4", "[::1]:5678" -> "::1"; anything else as it is.
std::string access_client(std::string_view peer_text);
// The host (and port) of "scheme://host:port/path..."; empty when there is none.
std::string access_url_host(std::string_view url);

// The line without its '\n'. utc_offset_s: the local time zone's offset at rec.unix_ms, for
// combined and common ([08/Dec/2026:10:00:00 +0100]); json writes UTC.
std::string format_access_line(const AccessRecord& rec, config::AccessLogFormat format, long utc_offset_s);

}  // namespace sluice::server
