// FileResponder: GET/HEAD /{vod-app}/{path}, a file below the app's root. Small files are answered
// from memory (small_file_cache.hpp), head and body in one write; larger ones have their body sent
// with sendfile(2) (sendfile.hpp), never through user space.
//
// Steps:
//  1. The name is checked (util.hpp, http_file_relative_path: the download rules).
//  2. A fresh entry of the loop's small-file cache answers at once, with no threadpool work.
//  3. Otherwise a threadpool job (file_lookup.hpp) opens the file confined to the root
//     (server/vod/confined_open.hpp, the open RTMP VOD uses too) and fstats it, off the loop (a
//     slow disk or NFS never stalls it). A small file is read whole there and closed, then cached;
//     a larger one stays open and its body is sent from that descriptor.
//  4. The answer is planned from the request and the file's size and mtime (file_reply.hpp):
//     preconditions (304, 412), one Range (206, 416), or the whole file.
//  5. From memory: head and body are queued together and the response finishes. From the disk: the
//     head is queued; once it is written, the body goes around the batch path
//     (HttpConnection::send_file); when it is sent the file is closed and the response finishes.
//     A failed body closes the connection: the head promised a length.
// The open file is the responder's: closed once answered, or when the connection closes.
#pragma once

#include <uv.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "base/bytes.hpp"
#include "config/config.hpp"
#include "server/access/access_ticket.hpp"
#include "server/http/file_reply.hpp"
#include "server/http/request.hpp"
#include "server/http/responder.hpp"

namespace sluice::server {

class HttpConnection;

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
  // The answer from the file's bytes in memory (the whole file) and its head lines.
  void answer_from_memory(const HttpFileMeta& meta, const Slice& body);
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
