// HttpRequest: one parsed HTTP/1.x request head, as the HTTP connection hands it to a handler.
// Filled by http_parser callbacks (nodejs/http-parser); nothing here parses bytes itself.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sluice::server {

struct HttpRequest {
  std::string method;  // "GET", "HEAD", ... as http_method_str() spells it
  std::string target;  // the request target as sent: "/live/cam.flv?x=1"
  std::string path;    // its path, still percent-encoded: "/live/cam.flv"
  std::string query;   // after '?', without it; empty when absent
  // Field names lower-cased; values with surrounding whitespace removed. In arrival order.
  std::vector<std::pair<std::string, std::string>> headers;
  unsigned version_major = 1;
  unsigned version_minor = 1;
  bool keep_alive = true;       // http_should_keep_alive(): the client accepts another request after this one
  bool has_body = false;        // Content-Length > 0 or chunked
  bool chunked = false;         // Transfer-Encoding: chunked
  uint64_t content_length = 0;  // 0 when absent or chunked
  // A POST's body (a WHIP or WHEP offer), at most 64 KB; other requests' bodies are not kept.
  std::string body;

  // Empty for the next request on the connection, keeping the memory (a keep-alive connection
  // parses many requests).
  void reset() {
    method.clear();
    target.clear();
    path.clear();
    query.clear();
    headers.clear();
    version_major = 1;
    version_minor = 1;
    keep_alive = true;
    has_body = false;
    chunked = false;
    content_length = 0;
    if (!body.empty()) body = std::string();  // rare and up to 64 KB: not kept for the next request
  }

  // The first value of a header (name lower case), or nullptr.
  const std::string* header(std::string_view lower_name) const {
    for (const auto& [k, v] : headers)
      if (k == lower_name) return &v;
    return nullptr;
  }
  size_t header_count(std::string_view lower_name) const {
    size_t n = 0;
    for (const auto& h : headers) n += h.first == lower_name;
    return n;
  }
  bool is_http11() const { return version_major > 1 || (version_major == 1 && version_minor >= 1); }
};

}  // namespace sluice::server
