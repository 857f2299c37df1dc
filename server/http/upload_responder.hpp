// UploadResponder: PUT /{vod-app}/{path}, a file streamed into the app's root.
//
// 1. The request is judged on its head, before any body byte is read (http_judge_upload): the
//    token (Authorization: Bearer, or ?token=), the name (the download rules plus
//    http.upload.extensions), the declared size (http.upload.max_size). Refusals close the
//    connection, since the body is left unread.
// 2. A threadpool job opens the folder confined below the root (confined_open_dir, the open
//    downloads use: no symlink out of the root, none at all with follow_symlinks: false), checks
//    the target (absent or a regular file; If-None-Match: * refuses to replace) and creates the
//    temporary file, hidden next to the target (".{name}.upload-{random}": never served, hidden
//    names are refused by downloads), relative to the folder's descriptor, which is kept to the
//    end: the rename and the cleanup are relative to it too. One upload at a time per target
//    (409 otherwise).
// 3. "100 Continue" if the client asked; the body then streams into the file with uv_fs_write on
//    the threadpool while the next piece is received, one write in flight, reading from the
//    socket pausing while a buffer's worth waits for the disk.
// 4. Body complete: fsync, close, rename over the target (RENAME_NOREPLACE with If-None-Match: *);
//    201 Created (or 204 when replacing). So
//    a failed, refused or aborted upload leaves nothing half-written and never replaces a good
//    file.
// Any failure or an abort (client gone, too large, stalled) answers at once (when the client is
// still there) and hands the temporary file to its own cleanup: close, then unlink, which runs to
// its end whatever becomes of the connection.
#pragma once

#include <sys/types.h>
#include <uv.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "config/config.hpp"
#include "server/http/request.hpp"
#include "server/http/responder.hpp"

namespace sluice::server {

class HttpConnection;

// The judgement of an upload's head. No I/O: unit-tested in
// tests/unit/server/http/upload_responder_test.cpp.
struct HttpUploadVerdict {
  int status = 0;          // 0: accepted; else the refusal's status
  std::string message;     // the refusal's message
  std::string headers;     // extra lines of the refusal (WWW-Authenticate)
  std::string log_reason;  // non-empty: the refusal is logged (event=upload_refused) with it
  bool bad_name = false;   // refused for its name (counted as GuardEvent::UploadBadName)
  std::string rel;         // accepted: the file's path below the root
};
// rest: the path after "/{app}/", still percent-encoded.
HttpUploadVerdict http_judge_upload(const HttpRequest& req, std::string_view rest, const config::HttpConfig& cfg);

class UploadResponder final : public HttpResponder {
 public:
  explicit UploadResponder(HttpConnection& conn) : conn_(conn) {}
  ~UploadResponder() override;

  const char* activity() const override { return "upload"; }
  void start(const config::AppConfig& app, std::string_view rest);

  bool takes_body() const override;
  bool body_backlogged() const override;
  int on_body(const char* at, size_t len) override;
  void on_body_end() override;
  void on_body_failed(int status, std::string_view why) override { abort(status, why); }
  void on_tick(uint64_t now_ms) override;
  void close() override { abort(0, "connection closed"); }

 private:
  struct OpenJob;
  struct Upload;  // the temporary file and its writes (upload_responder.cpp)
  enum class Stage : uint8_t;

  void on_opened(OpenJob& job);
  // Starts the next write (or, once the body is in, the fsync) unless one is in flight.
  void step();
  // A file operation of the upload completed (result: bytes, or a libuv error).
  void on_stored(Stage stage, ssize_t result);
  static void on_fs(uv_fs_t* req);
  // The rename or removal of the temporary file, relative to its folder's descriptor.
  static void dir_work(uv_work_t* req);
  static void on_dir_work(uv_work_t* req, int status);
  // An operation of `u` completed: to its owner, or on with the cleanup once aborted.
  static void done(Upload* u, ssize_t result);
  void finish();
  // Ends the upload: logs, answers `status` (0: no answer, the connection is closing) and hands
  // the temporary file to its cleanup.
  void abort(int status, std::string_view message);

  HttpConnection& conn_;
  Upload* upload_ = nullptr;  // owned, from the temporary file's creation to the end or abort
};

}  // namespace sluice::server
