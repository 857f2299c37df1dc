// HttpConnection: one HTTP/1.x client socket. Parses requests with nodejs/http-parser, answers them
// one at a time and in order (pipelined requests wait, unparsed, in the input buffer), keeps the
// connection alive between requests, and enforces the limits that protect the server from
// hostile clients: header size (431), URL size (414), header time (slowloris: 408), body size
// (413), HTTP version (505), Host (400), Expect (417), idle keep-alive time, send time.
//
// What every request shares is here: the parser and its limits, the input buffer, keep-alive and
// the lingering close, the response head writer (write_head, send_simple, send_shared, send_error;
// in connection_answers.cpp), the request log line, the timeouts, and the StreamSocket hooks.
// Where the connection is in its cycle (idle, receiving a head or a body, responding, finishing,
// lingering) is one HttpRequestCycle (request_state.hpp). The answer itself is an HttpResponder
// (responder.hpp), chosen by the router (routes.cpp) and owned by the connection for the length of
// the answer.
//
// The socket, its batched writes and the lifetime rule are StreamSocket's (server/io/); at most
// one batch (or one sendfile transfer) is in flight, and whatever is queued meanwhile goes out as
// the next batch.
//
// Lifecycle: created by HttpService on accept; close() is idempotent and removes it from the
// service at once; the object is deleted when its socket handle has closed and no threadpool job
// (file open, sendfile, file close, upload open) retains it any more.
#pragma once

#include <http_parser.h>
#include <uv.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "server/access/peer_limits.hpp"
#include "server/http/request.hpp"
#include "server/http/request_state.hpp"
#include "server/http/responder.hpp"
#include "server/http/sendfile.hpp"
#include "server/http/tls_file_sender.hpp"
#include "server/io/stream_socket.hpp"

namespace sluice::server {

class HttpService;

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
  // Answers status with message and closes, without a log line (the caller logs a flood once).
  void reject_quietly(int status, std::string_view message);
  // limits.per_ip (server/access/peer_limits.hpp): false when the address is full.
  bool take_peer_slot(uint32_t per_ip) { return peer_slot_.take(peer_address(), per_ip); }
  void on_tick(uint64_t now_ms);
  void shutdown_gracefully();

  // For the stats API: what the connection does now ("idle", "http-flv", "download", ...), on
  // which resource (the last request's path), and the HTTP-FLV reader while a stream is sent.
  const char* activity() const { return responder_ ? responder_->activity() : "idle"; }
  const std::string& resource() const { return resource_; }
  const HttpFlvPlayer* flv() const { return responder_ ? responder_->flv() : nullptr; }

  // ---- For the router and the responders (routes.cpp, *_responder.cpp).

  HttpService& service() { return service_; }
  // The request being answered; valid until the next request begins.
  const HttpRequest& request() const { return req_; }
  // A HEAD request: heads only.
  bool head_only() const { return head_only_; }
  RequestState state() const { return cycle_.state(); }

  // Makes an R the responder of the request being dispatched; the router then starts it.
  template <class R, class... Args>
  R& respond(Args&&... args) {
    auto r = std::make_unique<R>(*this, std::forward<Args>(args)...);
    R& ref = *r;
    responder_ = std::move(r);
    return ref;
  }

  // Response heads. write_head() queues the status line and headers; how the body is delimited
  // decides Content-Length, Transfer-Encoding and, with the request, Connection.
  enum class Body { Length, Chunked, UntilClose, None };
  void write_head(int status, std::string_view headers, Body body, uint64_t length = 0);
  // A whole small answer (the body is omitted for HEAD, 204 and 304); finishes the response.
  void send_simple(int status, std::string_view content_type, std::string_view body, std::string_view headers = {});
  // The same with a shared body: queued behind the head, not copied (an answer several requests share).
  void send_shared(int status, std::string_view content_type, const Slice& body, std::string_view headers = {});
  // "404 Not Found: message" as text/plain; close_after ends the connection after it.
  void send_error(int status, std::string_view message, bool close_after = false, std::string_view headers = {});
  // "100 Continue" when the client asked for it and the body is still to come.
  void send_continue();
  // The answer is complete (its bytes may still be queued): the request line is logged and the
  // connection goes on with the next request, or finishes.
  void finish_response();
  // Body bytes of the response, for the request log line.
  void add_body_bytes(uint64_t n) { response_body_bytes_ += n; }
  // Queues shared body bytes (a cached file's) after everything queued so far, without copying
  // them: they go out in the same write as the head before them. Counted as body bytes.
  void queue_body(Slice body);
  // Sends [offset, offset + length) of file_fd around the batch path (server/http/sendfile.hpp);
  // done(0 or a libuv error) runs unless the connection closes first. A libuv error code when
  // it cannot start.
  int send_file(uv_file file_fd, uint64_t offset, uint64_t length, std::function<void(int)> done);

  // Reading, for an answer that takes the request body: pause while the body waits for the disk,
  // resume (after parsing what waits) once it does not, and note progress (the stall limit).
  void pause_input();
  bool input_paused() const { return !reading(); }
  void resume_input();
  void note_body_progress();
  // When a byte was last received, or the body last made progress.
  uint64_t last_read_ms() const { return last_read_ms_; }

 private:
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
  bool has_pending_output() const override { return !out_.empty() || !out_slices_.empty(); }
  void on_close(const std::string& reason) override;
  // Plain HTTP sets TCP_NODELAY in write_head, only when the answer is not the connection's last.
  bool nodelay_at_open() const override { return tls(); }

  void process_input();
  void dispatch();
  // send_simple's head; true when a body of `length` bytes follows it.
  bool simple_head(int status, std::string_view content_type, std::string_view headers, uint64_t length);
  // An answer that cannot wait for the request (timeouts, parse errors): error, then close.
  void refuse(int status, std::string_view message);
  void begin_linger();
  bool responder_takes_body() const;
  void log_request(int status, uint64_t body_bytes);

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

  HttpService& service_;
  uv_shutdown_t shutdown_req_{};
  HttpRequestCycle cycle_;

  // Input.
  http_parser parser_{};
  HttpRequest req_;
  std::string field_;  // header field being received (names arrive in pieces)
  bool last_was_value_ = false;
  size_t header_bytes_ = 0;
  uint64_t body_bytes_ = 0;  // of a body read and dropped
  int error_status_ = 0;     // set by a callback that rejects the request
  bool parsing_ = false;     // inside process_input (a handler must not re-enter it)
  std::vector<char> in_;     // received, not yet parsed (pipelined requests wait here)
  size_t in_pos_ = 0;
  bool peer_eof_ = false;
  bool request_complete_ = false;  // the last request was parsed to its end (and not refused)
  bool tcp_keepalive_ = false;     // SO_KEEPALIVE is on (from the first tick after kTcpKeepAliveAfterMs)
  uint64_t last_read_ms_ = 0;

  // Output.
  std::vector<uint8_t> out_;  // response heads and small bodies, in order
  // Shared bodies queued between out_'s bytes: each goes after the first `at` bytes of out_.
  struct QueuedSlice {
    size_t at;
    Slice bytes;
  };
  std::vector<QueuedSlice> out_slices_;
  size_t out_slice_bytes_ = 0;
  bool resume_input_ = false;  // parse what waits at the next flush
  bool keep_alive_ = true;     // of the current response
  bool head_only_ = false;
  std::string resource_;
  int status_ = 0;
  uint64_t response_started_ms_ = 0;
  uint64_t response_body_bytes_ = 0;
  uint64_t access_bytes_in_ = 0;              // bytes_in() at the last request's access log line
  std::unique_ptr<HttpResponder> responder_;  // the answer in progress
  std::unique_ptr<HttpResponder> finished_;   // the last one, inert, until the next request
  HttpSendfile sendfile_;                     // the socket's second write path, for file bodies
  TlsFileSender tls_file_;                    // file bodies over HTTPS (sendfile cannot encrypt)
  PeerSlot peer_slot_;
};

}  // namespace sluice::server
