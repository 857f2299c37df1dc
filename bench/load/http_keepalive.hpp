// HttpKeepAlive: one HTTP/1.1 client connection that sends requests one at a time and reuses
// the connection between them (keep-alive), as a browser's HLS loader does. The caller asks
// get(target) (or request() with another method and a body: a WHEP offer, its DELETE); the answer
// comes back through the Handler: status, the Location header, the first `keep` bytes of the body
// (a playlist whole, a media part's first KiB, an SDP answer) and the body's size.
//
// Reconnects by itself: when the server closed the connection (Connection: close, or idle
// close between requests), the next get() connects again, and a request whose connection was
// closed before any byte of the answer came is sent once more on a new one (RFC 9112 9.3.1).
// Anything else (connect error, a close in the middle of a response, a parse error) is reported
// as an error and the connection is dropped; the caller decides what to do next.
//
// Each TCP connection is a heap object freed by its own close callback, so a reconnect never
// waits for libuv to finish closing the previous handle. Reads use one 64 KiB buffer shared by
// every connection of the process (libuv hands a read to exactly one callback).
#pragma once

#include <http_parser.h>
#include <sys/socket.h>
#include <uv.h>

#include <cstdint>
#include <string>

namespace sluice::bench {

struct HttpResponse {
  unsigned status = 0;
  std::string location;     // the Location header, when there is one
  std::string body;         // the first `keep` bytes of the body
  uint64_t body_bytes = 0;  // the whole body
  int64_t sent_ns = 0;      // when the request went out
  int64_t done_ns = 0;      // when the last byte of the response arrived
};

class HttpKeepAlive {
 public:
  class Handler {
   public:
    virtual ~Handler() = default;
    // The response is the caller's until the next get(), which may be called from here.
    virtual void on_response(HttpResponse& response) = 0;
    virtual void on_http_error(const std::string& reason) = 0;
  };

  HttpKeepAlive(uv_loop_t* loop, const sockaddr_storage& addr, std::string host_header, Handler& handler);
  ~HttpKeepAlive();
  HttpKeepAlive(const HttpKeepAlive&) = delete;
  HttpKeepAlive& operator=(const HttpKeepAlive&) = delete;

  // Sends GET target; one request at a time (a second get() before the answer is a bug).
  void get(const std::string& target, size_t keep) { request("GET", target, {}, {}, keep); }
  // Any method; `headers` are whole lines ("Content-Type: application/sdp\r\n"); a body gets its
  // Content-Length. The same one-at-a-time rule.
  void request(const char* method, const std::string& target, const std::string& headers, const std::string& body,
               size_t keep);
  bool busy() const { return busy_; }
  // Closes the connection; a pending request gets no answer.
  void close();

  uint64_t bytes_in() const { return bytes_in_; }
  uint64_t bytes_out() const { return bytes_out_; }
  uint32_t connects() const { return connects_; }
  // How long the pending request has waited (connecting included); 0 when none is pending.
  int64_t request_age_ns(int64_t now_ns) const { return busy_ ? now_ns - asked_ns_ : 0; }

  static uint64_t total_reads();
  static uint64_t total_read_bytes();

 private:
  struct Conn;

  void connect();
  void send();
  void handle_read(Conn* c, const char* data, size_t len);
  void handle_eof(Conn* c);
  void drop(const std::string& error);
  void finish();

  static void on_connect(uv_connect_t* req, int status) noexcept;
  static void on_alloc(uv_handle_t* handle, size_t suggested, uv_buf_t* buf) noexcept;
  static void on_read(uv_stream_t* stream, ssize_t nread, const uv_buf_t* buf) noexcept;
  static void on_write(uv_write_t* req, int status) noexcept;
  static void on_closed(uv_handle_t* handle) noexcept;
  static int on_header_field(http_parser* p, const char* at, size_t len) noexcept;
  static int on_header_value(http_parser* p, const char* at, size_t len) noexcept;
  static int on_headers_complete(http_parser* p) noexcept;
  static int on_body(http_parser* p, const char* at, size_t len) noexcept;
  static int on_message_complete(http_parser* p) noexcept;
  static const http_parser_settings& parser_settings();

  uv_loop_t* loop_;
  sockaddr_storage addr_;
  std::string host_header_;
  Handler& handler_;
  Conn* conn_ = nullptr;  // the current connection, null when there is none
  std::string request_;
  size_t keep_ = 0;
  http_parser parser_{};
  HttpResponse response_;
  bool busy_ = false;
  int64_t asked_ns_ = 0;         // when get() was called
  bool answer_started_ = false;  // a byte of the answer arrived on this connection
  bool retried_ = false;         // this request was already sent again once
  bool complete_ = false;
  bool reusable_ = false;     // the answer allows keep-alive
  std::string field_;         // the header name being read (its first 16 bytes)
  bool in_value_ = false;     // the parser is in a header's value
  bool in_location_ = false;  // ... of Location
  uint64_t bytes_in_ = 0;
  uint64_t bytes_out_ = 0;
  uint32_t connects_ = 0;
};

}  // namespace sluice::bench
