// What a GET or HEAD of a file is answered with (RFC 9110 sections 13 and 14): preconditions (304,
// 412), one Range (206, 416), or the whole file, and the exact head lines of each. No I/O:
// unit-tested in tests/unit/server/http/file_responder_test.cpp.
//
// The lines that depend only on the file (Content-Type, ETag, Last-Modified) are formatted once per
// version of the file (HttpFileMeta): a cached file keeps them (small_file_cache.hpp), so a request
// for it formats no date and no ETag.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "server/http/request.hpp"
#include "server/http/util.hpp"

namespace sluice::server {

struct HttpFileMeta {
  uint64_t size = 0;
  HttpValidators validators;  // the ETag and the mtime in seconds
  // "Content-Type ... Accept-Ranges ... ETag ... Last-Modified ... Access-Control-Allow-Origin",
  // each ending in CRLF: the head lines of a 200. From validators_at on: those of a 304 or 412.
  std::string lines;
  size_t validators_at = 0;
};
// rel names the file below its root (for its Content-Type); size and mtime_ns are its fstat.
HttpFileMeta http_file_meta(std::string_view rel, uint64_t size, int64_t mtime_ns);

struct HttpFileReply {
  int status = 200;        // 200 or 206 with a body; 304 (no body), 412 and 416 (errors)
  std::string headers;     // the head's lines besides the status, Date, Server and length
  std::string_view error;  // the message of a 412 or 416 (sent as an error); empty otherwise
  uint64_t first = 0;      // the body: [first, first + length) of the file
  uint64_t length = 0;
};
HttpFileReply http_file_reply(const HttpRequest& req, const HttpFileMeta& meta);
HttpFileReply http_file_reply(const HttpRequest& req, std::string_view rel, uint64_t size, int64_t mtime_ns);

}  // namespace sluice::server
