// HttpConnection: one HTTP/1.x client socket. Parses requests with nodejs/http-parser, answers them
// one at a time and in order (pipelined requests wait, unparsed, in the input buffer),
// keeps the connection alive between requests, and enforces the limits that protect the server
// from hostile clients: header size (431), header time (slowloris: 408), body size (413), idle
// keep-alive time.
//
// A response is one of:
//  - a simple response: head and small body queued at once (errors, 304, JSON);
//  - HTTP-FLV: the head, then tags from an HttpFlvPlayer until the publisher leaves;
//  - a file: the head, then a byte range of a file through HttpSendfile (never via user space);
//  - an upload (PUT): judged on its head, the body streamed to a temporary file, then renamed.
// The socket, its batched writes and the lifetime rule are StreamSocket's (server/io/); at most
// one batch (or one sendfile transfer) is in flight, and whatever is queued meanwhile goes out as
// the next batch. Request routing lives in handlers.cpp.
//
// Lifecycle: created by HttpService on accept; close() is idempotent and removes it from the
// service at once; the object is deleted when its socket handle has closed and no threadpool job
// (file open, sendfile, close, upload step) retains it any more.
#pragma once

#include <http_parser.h>
#include <uv.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "server/http/request.hpp"
#include "server/http/sendfile.hpp"
#include "server/io/stream_socket.hpp"

namespace sluice::config {
struct AppConfig;
}

namespace sluice::server {

class HttpService;
class HttpFlvPlayer;
struct HttpFileJob;
struct HttpUpload;
struct HttpUploadJob;

class HttpConnection final : public StreamSocket {
 public:
  // Request line and header fields together, in bytes. Over it: 431 (414 when the URL alone is).
  static constexpr size_t kMaxHeaderBytes = 16 * 1024;
  // Header fields per request; over it: 431 (each field costs a vector entry).
  static constexpr size_t kMaxHeaderFields = 100;

  HttpConnection(HttpService& service, uint64_t id);
  HttpConnection(const HttpConnection&) = delete;
  HttpConnection& operator=(const HttpConnection&) = delete;

  // Answers 503 and closes (the server is over its connection limit).
  void reject_overloaded(const std::string& reason);
  void on_tick(uint64_t now_ms);
  void shutdown_gracefully();

  // For the stats API: what the connection does now ("idle", "http-flv", "download", ...) and
  // on which resource.
  const char* activity() const;
  const std::string& resource() const { return resource_; }
  const HttpFlvPlayer* flv() const { return flv_.get(); }

 private:
  friend struct HttpFileJob;
  friend struct HttpUploadJob;
  enum class Activity { Idle, Simple, Flv, File, Upload };

  ~HttpConnection() override = default;

  // StreamSocket hooks.
  void on_open() override;
  void on_bytes(std::span<const uint8_t> bytes) override;
  void on_peer_closed() override;
  bool before_flush() override;
  bool fill(WriteBatch& batch, size_t max_bytes) override;
  void on_nothing_to_write() override;
  void on_written(bool async) override;
  void keep_unwritten(std::span<const uint8_t> rest) override;
  bool has_pending_output() const override { return !out_.empty(); }
  void on_close(const std::string& reason) override;

  void process_input();
  void begin_linger();

  // Parser callbacks (static trampolines in the .cpp).
  static const http_parser_settings& parser_settings();
  int on_message_begin();
  int on_url(const char* at, size_t len);
  int on_header_field(const char* at, size_t len);
  int on_header_value(const char* at, size_t len);
  int on_headers_complete();
  int on_body(const char* at, size_t len);
  int on_message_complete();
  int parse_error_status() const;

  // Responses.
  enum class Body { Length, Chunked, UntilClose, None };
  void write_head(int status, std::string_view headers, Body body, uint64_t length = 0);
  void send_simple(int status, std::string_view content_type, std::string_view body, std::string_view headers = {});
  void send_error(int status, std::string_view message, bool close_after = false, std::string_view headers = {});
  void complete_response();
  void log_request(int status, uint64_t body_bytes);

  // Handlers (http_handlers.cpp).
  void dispatch();
  void handle_flv(const config::AppConfig& app, std::string_view rest);
  void handle_file(const config::AppConfig& app, std::string_view rest);
  void handle_api();
  void on_file_opened(HttpFileJob& job);
  void start_file_body();
  void end_file_body(int status);
  void close_file();
  // Upload (http_upload.cpp).
  void handle_upload(const config::AppConfig& app, std::string_view rest);
  void on_upload_opened(HttpUploadJob& job);
  bool upload_receiving() const;
  bool upload_backpressure() const;
  int on_upload_body(const char* at, size_t len);
  void upload_step();
  void finish_upload(int status, std::string_view message);
  void abort_upload(int status, std::string_view message);
  static void on_upload_fs(uv_fs_t* req);

  HttpService& service_;
  uv_shutdown_t shutdown_req_{};

  // Input.
  http_parser parser_{};
  HttpRequest req_;
  std::string field_;  // header field being received (names arrive in pieces)
  bool last_was_value_ = false;
  size_t header_bytes_ = 0;
  uint64_t body_bytes_ = 0;
  int error_status_ = 0;  // set by a callback that rejects the request
  bool message_done_ = false;
  bool head_dispatch_ = false;  // a PUT is answered from its head; its body follows
  bool body_pending_ = false;   // the current request's body is not read to its end
  bool in_body_ = false;        // between the head and the end of a request body
  bool parsing_ = false;
  std::vector<char> in_;  // received, not yet parsed (pipelined requests wait here)
  size_t in_pos_ = 0;
  bool peer_eof_ = false;

  // Output.
  std::vector<uint8_t> out_;  // response heads and small bodies, in order
  bool responding_ = false;  // a request is being answered; the next one waits
  bool resume_input_ = false;
  bool keep_alive_ = true;  // of the current response
  bool close_after_write_ = false;
  bool lingering_ = false;
  bool head_only_ = false;
  Activity activity_ = Activity::Idle;
  std::string resource_;
  int status_ = 0;
  uint64_t response_started_ms_ = 0;
  uint64_t response_body_bytes_ = 0;

  // HTTP-FLV.
  std::unique_ptr<HttpFlvPlayer> flv_;
  bool flv_chunked_ = false;

  // File download.
  HttpSendfile sendfile_;
  uv_file file_fd_ = -1;
  uint64_t file_offset_ = 0;
  uint64_t file_length_ = 0;
  bool file_body_pending_ = false;  // head queued; body starts once the head is written

  // Upload.
  std::unique_ptr<HttpUpload> upload_;

  // Timeouts.
  uint64_t idle_since_ms_ = 0;       // no byte of the next request yet, since this time
  uint64_t request_started_ms_ = 0;  // first byte of the request being received; 0 when none
  uint64_t last_read_ms_ = 0;
  uint64_t linger_started_ms_ = 0;
  bool first_request_ = true;
};

}  // namespace sluice::server
