// FileResponder: GET/HEAD /{vod-app}/{path}, a file below the app's root, its body sent with
// sendfile(2) (sendfile.hpp) and never through user space.
//
// Steps:
//  1. The name is checked (util.hpp, http_file_relative_path: the download rules).
//  2. A threadpool job opens the file confined to the root (server/vod/confined_open.hpp, the
//     open RTMP VOD uses too) and fstats the descriptor, off the loop (a slow disk or NFS never
//     stalls it); the body is sent from that descriptor.
//  3. The answer is planned from the request and the file's size and mtime (http_file_reply):
//     preconditions (304, 412), one Range (206, 416), or the whole file.
//  4. The head is queued; once it is written, the body goes around the batch path
//     (HttpConnection::send_file); when it is sent the file is closed and the response finishes.
//     A failed body closes the connection: the head promised a length.
// The open file is the responder's: closed once answered, or when the connection closes.
#pragma once

#include <uv.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "config/config.hpp"
#include "server/http/request.hpp"
#include "server/access/access_ticket.hpp"
#include "server/http/responder.hpp"

namespace sluice::server {

class HttpConnection;

// What a GET or HEAD of an opened file is answered with (RFC 9110 sections 13 and 14). No I/O:
// unit-tested in tests/unit/server/http/file_responder_test.cpp.
struct HttpFileReply {
  int status = 200;        // 200 or 206 with a body; 304 (no body), 412 and 416 (errors)
  std::string headers;     // the head's lines besides the status, Date, Server and length
  std::string_view error;  // the message of a 412 or 416 (sent as an error); empty otherwise
  uint64_t first = 0;      // the body: [first, first + length) of the file
  uint64_t length = 0;
};
// rel names the file below its root (for its Content-Type); size and mtime_ns are its fstat.
HttpFileReply http_file_reply(const HttpRequest& req, std::string_view rel, uint64_t size, int64_t mtime_ns);

class FileResponder final : public HttpResponder {
 public:
  explicit FileResponder(HttpConnection& conn) : conn_(conn) {}

  const char* activity() const override { return "download"; }
  // rest: the path after "/{app}/", still percent-encoded.
  // decoded: the path after "/{app}/", percent-decoded; ticket: the access gate's.
  void start(const config::AppConfig& app, const std::string& decoded, AccessTicket ticket);

  void on_written() override;
  void close() override { close_file(); }

 private:
  struct OpenJob;
  enum class Stage { Opening, Head, Body, Done };

  void on_opened(OpenJob& job);
  void start_body();
  void end_body(int status);
  void close_file();
  AccessTicket ticket_;

  HttpConnection& conn_;
  Stage stage_ = Stage::Opening;
  uv_file fd_ = -1;
  uint64_t offset_ = 0;
  uint64_t length_ = 0;
};

}  // namespace sluice::server
