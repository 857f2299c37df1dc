// HttpFlvClient: one HTTP-FLV player. It connects with its own uv_tcp_t, sends
// "GET /app/stream.flv", parses the response with http-parser (the server's own HTTP parser:
// status line, headers, chunked transfer coding or a close-delimited body), feeds the body to
// media::FlvParser (the server's FLV reader) and gives each tag to the same PlaybackMonitor the
// RTMP player uses, so TTFF, keyframe, monotonicity and stalls mean exactly the same thing.
//
// Figures (ClientStats), as for the RTMP player:
//  - bytes_in: everything read from the socket (status line, headers, chunk framing, FLV);
//  - messages_in: FLV tags (audio, video, script);
//  - setup: TCP connect issued -> request written; TTFF: request written -> first video picture;
//  - ended: the server ended the response cleanly (last chunk of a chunked body, or the close of
//    an HTTP/1.0 body): the publisher left. Anything else that ends the response early fails the
//    player: a status other than 200, an HTTP or FLV parse error, a close in the middle.
//
// Reads use one 64 KiB buffer shared by every HTTP-FLV player of the process (libuv hands a read
// to exactly one callback, which consumes it before returning), and SO_RCVLOWAT read batching
// after the first picture (ReadBatching), as the RTMP player does.
//
// Lifecycle: construct, start() once; the object must not move and must outlive its handle (the
// runner closes everything with stop(), runs the loop dry, then destroys the clients).
#pragma once

#include <http_parser.h>
#include <uv.h>

#include <cstdint>
#include <span>
#include <string>

#include "media/flv/flv_parser.hpp"
#include "bench/load/client.hpp"
#include "bench/load/http_url.hpp"
#include "bench/load/options.hpp"
#include "bench/load/playback_monitor.hpp"
#include "bench/load/read_batching.hpp"

namespace sluice::bench {

class HttpFlvClient final : public Client {
 public:
  HttpFlvClient(uv_loop_t* loop, HttpUrl url, const BenchOptions& options, ClientStats identity);
  HttpFlvClient(const HttpFlvClient&) = delete;
  HttpFlvClient& operator=(const HttpFlvClient&) = delete;

  void start() override;
  void tick(int64_t now_ns) override;
  void stop() override;
  const ClientStats& stats() override { return stats_; }

  // Reads done by all HTTP-FLV players of the process, and their bytes.
  static uint64_t total_reads();
  static uint64_t total_read_bytes();

 private:
  enum class State : uint8_t { Idle, Connecting, Requested, Streaming, Done };

  static void on_connect(uv_connect_t* req, int status) noexcept;
  static void on_alloc(uv_handle_t* handle, size_t suggested, uv_buf_t* buf) noexcept;
  static void on_read(uv_stream_t* stream, ssize_t nread, const uv_buf_t* buf) noexcept;
  static void on_write(uv_write_t* req, int status) noexcept;
  static int on_headers_complete(http_parser* p) noexcept;
  static int on_body(http_parser* p, const char* at, size_t len) noexcept;
  static int on_message_complete(http_parser* p) noexcept;
  static const http_parser_settings& parser_settings();

  void send_request();
  void request_written();
  void handle_read(const char* data, size_t len);
  void handle_eof();
  // What the parser stopped on (our own pause, or an HTTP error), after http_parser_execute().
  void check_parser(size_t parsed, size_t len);
  void handle_body(std::span<const uint8_t> bytes);
  void set_receive_low_water(uint32_t bytes);
  void fail(const std::string& reason);
  void close();

  HttpUrl url_;
  const BenchOptions& options_;
  uv_tcp_t tcp_{};
  uv_connect_t connect_req_{};
  uv_write_t write_req_{};
  std::string request_;
  http_parser parser_{};
  media::FlvParser flv_;
  PlaybackMonitor monitor_;
  ReadBatching batching_;
  ClientStats stats_;
  State state_ = State::Idle;
  std::string stop_reason_;  // set by a callback that paused the parser because of an error
  bool connected_ = false;
  bool closing_ = false;
  bool stopping_ = false;
  bool complete_ = false;  // the response ended cleanly
};

}  // namespace sluice::bench
