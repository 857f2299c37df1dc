// Pure HTTP helpers for the HTTP side: status texts, dates, percent-decoding, file names under a
// media root, Range and conditional-request rules (RFC 9110 sections 13 and 14). No I/O, no libuv:
// unit-tested in tests/unit/server/http/util_test.cpp.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/result.hpp"
#include "server/http/request.hpp"

namespace sluice::server {

// The CORS header of answers any web page may read (media, errors about media).
inline constexpr std::string_view kHttpCors = "Access-Control-Allow-Origin: *\r\n";

// "Not Found" for 404; "Unknown" for codes we never send.
std::string_view http_status_text(int status);

// Decodes %XX escapes in a path (not '+': paths are not form data). False on a malformed escape.
// Queries are parsed by server/access/query.hpp.
bool http_percent_decode(std::string_view in, std::string& out);

// IMF-fixdate, "Sun, 06 Nov 1994 08:49:37 GMT".
std::string http_format_date(int64_t unix_seconds);
// IMF-fixdate, RFC 850 and asctime forms (RFC 9110 5.6.7); nullopt when none matches.
std::optional<int64_t> http_parse_date(std::string_view text);

// The Content-Type of a servable media file, from its extension (case-insensitive); empty when the
// extension is not one we serve. The list is the set of downloadable files.
std::string_view http_content_type_for(std::string_view path);
// The extension of the path's last segment, lower-cased, without the dot; empty when it has none.
std::string http_extension_of(std::string_view path);

// Checks a percent-decoded path below an app ("sub/clip.mp4") with the same rules as RTMP VOD names
// (vod_path.hpp): no empty, "." or ".." segments, no absolute path, no backslash, no control bytes,
// no '%' left after decoding (double encoding). Also refused: segments starting with '.', so hidden
// files (and uploads still being written, which are hidden) are never served, and extensions that
// http_content_type_for() does not know. Errc::NotFound with the reason.
Result<std::string> http_file_relative_path(std::string_view decoded);
// The longest decoded path http_file_relative_path() accepts.
inline constexpr size_t kHttpMaxPathLength = 1024;

// A strong validator from the file's identity: "\"<size hex>-<mtime ns hex>\"".
std::string http_make_etag(uint64_t size, int64_t mtime_ns);
// Whether an If-Match / If-None-Match list ("*" or comma-separated entity tags) matches `etag`.
// Weak comparison ignores W/ prefixes (If-None-Match); strong comparison never matches a weak tag.
bool http_etag_list_matches(std::string_view list, std::string_view etag, bool weak);

struct HttpByteRange {
  uint64_t first = 0;
  uint64_t last = 0;  // inclusive
  uint64_t length() const { return last - first + 1; }
};
enum class HttpRangeResult {
  Whole,          // no usable Range header (absent, another unit, malformed, several ranges): send 200
  Partial,        // one satisfiable range: send 206
  Unsatisfiable,  // send 416 with "Content-Range: bytes */size"
};
// One "bytes=a-b", "bytes=a-" or "bytes=-n" range against a representation of `size` bytes.
HttpRangeResult http_parse_range(std::string_view header, uint64_t size, HttpByteRange& out);

struct HttpValidators {
  std::string etag;
  int64_t mtime_s = 0;
};
enum class HttpPrecondition { Proceed, NotModified, Failed };
// RFC 9110 13.2.2 order: If-Match, If-Unmodified-Since, If-None-Match, If-Modified-Since.
// NotModified only for GET and HEAD (304); Failed is 412.
HttpPrecondition http_evaluate_preconditions(const HttpRequest& req, const HttpValidators& v);
// If-Range (RFC 9110 13.1.5): true when the Range header applies (no If-Range, or it matches).
bool http_if_range_allows(const HttpRequest& req, const HttpValidators& v);

}  // namespace sluice::server
