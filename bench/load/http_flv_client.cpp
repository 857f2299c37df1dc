#include "bench/load/http_flv_client.hpp"

#include <sys/socket.h>

#include <algorithm>
#include <array>

#include "bench/load/clock.hpp"

namespace sluice::bench {

namespace {

constexpr uint8_t kAudio = 8;
constexpr uint8_t kVideo = 9;
constexpr unsigned kStatusOk = 200;

// One read buffer for every HTTP-FLV player of the loop (see RtmpConnection for why).
constexpr size_t kReadBufferSize = 64 * 1024;
alignas(64) std::array<char, kReadBufferSize> g_read_buffer;
uint64_t g_reads = 0;
uint64_t g_read_bytes = 0;

std::string uv_error_text(const char* what, int status) { return std::string(what) + ": " + uv_strerror(status); }

}  // namespace

HttpFlvClient::HttpFlvClient(uv_loop_t* loop, HttpUrl url, const BenchOptions& options, ClientStats identity)
    : url_(std::move(url)),
      options_(options),
      monitor_(options.stall_ms),
      batching_(static_cast<uint32_t>(std::max(0, options.read_batch_ms))),
      stats_(std::move(identity)) {
  stats_.role = ClientRole::Player;
  // The handle is initialised here so close() is always valid, even before start().
  uv_tcp_init(loop, &tcp_);
  tcp_.data = this;
  http_parser_init(&parser_, HTTP_RESPONSE);
  parser_.data = this;
}

// Only three callbacks: the status, the body and its end (header fields are not kept).
const http_parser_settings& HttpFlvClient::parser_settings() {
  static const http_parser_settings settings = [] {
    http_parser_settings s;
    http_parser_settings_init(&s);
    s.on_headers_complete = on_headers_complete;
    s.on_body = on_body;
    s.on_message_complete = on_message_complete;
    return s;
  }();
  return settings;
}

uint64_t HttpFlvClient::total_reads() { return g_reads; }
uint64_t HttpFlvClient::total_read_bytes() { return g_read_bytes; }

void HttpFlvClient::start() {
  stats_.started_ns = now_ns();
  state_ = State::Connecting;
  connect_req_.data = this;
  if (int rc = uv_tcp_connect(&connect_req_, &tcp_, reinterpret_cast<const sockaddr*>(&url_.addr), on_connect); rc != 0)
    fail(uv_error_text("connect", rc));
}

void HttpFlvClient::on_connect(uv_connect_t* req, int status) noexcept {
  auto* self = static_cast<HttpFlvClient*>(req->data);
  if (self->closing_) return;  // closed locally while connecting: status is UV_ECANCELED
  if (status != 0) {
    self->fail(uv_error_text("connect", status));
    return;
  }
  self->connected_ = true;
  uv_tcp_nodelay(&self->tcp_, 1);
  if (int rc = uv_read_start(reinterpret_cast<uv_stream_t*>(&self->tcp_), on_alloc, on_read); rc != 0) {
    self->fail(uv_error_text("read_start", rc));
    return;
  }
  if (!guarded("send request", [&] { self->send_request(); })) self->fail("internal error after connect");
}

void HttpFlvClient::send_request() {
  const bool http10 = options_.http10;
  request_ = "GET " + url_.path + (http10 ? " HTTP/1.0\r\n" : " HTTP/1.1\r\n");
  request_ += "Host: " + url_.host_header + "\r\nUser-Agent: sluice-bench\r\nAccept: */*\r\n\r\n";
  // TTFF counts from the moment the request is handed to the socket, as the RTMP player counts
  // from the moment play is queued.
  const int64_t now = now_ns();
  monitor_.on_play_sent(now);
  stats_.setup_ns = now - stats_.started_ns;
  state_ = State::Requested;

  uv_buf_t buf = uv_buf_init(request_.data(), static_cast<unsigned>(request_.size()));
  const int n = uv_try_write(reinterpret_cast<uv_stream_t*>(&tcp_), &buf, 1);
  size_t sent = 0;
  if (n > 0) {
    sent = static_cast<size_t>(n);
    stats_.bytes_out += sent;
    if (sent == request_.size()) return;
  } else if (n != UV_EAGAIN && n != UV_ENOSYS) {
    fail(uv_error_text("write", n));
    return;
  }
  // Loopback takes a request at once; a full socket is the rare case.
  buf = uv_buf_init(request_.data() + sent, static_cast<unsigned>(request_.size() - sent));
  write_req_.data = this;
  if (int rc = uv_write(&write_req_, reinterpret_cast<uv_stream_t*>(&tcp_), &buf, 1, on_write); rc != 0)
    fail(uv_error_text("write", rc));
}

void HttpFlvClient::on_write(uv_write_t* req, int status) noexcept {
  auto* self = static_cast<HttpFlvClient*>(req->data);
  if (status == UV_ECANCELED || self->closing_) return;
  if (status != 0) {
    self->fail(uv_error_text("write", status));
    return;
  }
  self->stats_.bytes_out = self->request_.size();
}

void HttpFlvClient::on_alloc(uv_handle_t*, size_t, uv_buf_t* buf) noexcept {
  buf->base = g_read_buffer.data();
  buf->len = g_read_buffer.size();
}

void HttpFlvClient::on_read(uv_stream_t* stream, ssize_t nread, const uv_buf_t* buf) noexcept {
  auto* self = static_cast<HttpFlvClient*>(stream->data);
  if (nread > 0) {
    ++g_reads;
    g_read_bytes += static_cast<uint64_t>(nread);
    if (!guarded("read", [&] { self->handle_read(buf->base, static_cast<size_t>(nread)); }))
      self->fail("internal error while reading");
    return;
  }
  if (nread == UV_EOF) {
    if (!guarded("eof", [&] { self->handle_eof(); })) self->fail("internal error at end of stream");
  } else if (nread < 0) {
    self->fail(uv_error_text("read", static_cast<int>(nread)));
  }
}

void HttpFlvClient::handle_read(const char* data, size_t len) {
  stats_.bytes_in += len;
  if (closing_ || complete_) return;
  const size_t parsed = http_parser_execute(&parser_, &parser_settings(), data, len);
  check_parser(parsed, len);
}

void HttpFlvClient::check_parser(size_t parsed, size_t len) {
  if (closing_) return;
  if (!stop_reason_.empty()) {
    fail(stop_reason_);
    return;
  }
  if (complete_) {
    // The server ended the response: the publisher left. Not a failure, as Play.Stop is not.
    stats_.ended = true;
    state_ = State::Done;
    close();
    return;
  }
  const auto err = HTTP_PARSER_ERRNO(&parser_);
  if (err != HPE_OK) {
    fail(std::string("http: ") + http_errno_name(err) + " (" + http_errno_description(err) + ")");
    return;
  }
  if (parsed != len) fail("http: parser stopped early");
}

void HttpFlvClient::handle_eof() {
  if (closing_ || complete_) return;
  if (state_ == State::Streaming) {
    // An HTTP/1.0 (close-delimited) body ends here; a chunked one must have ended already.
    http_parser_execute(&parser_, &parser_settings(), nullptr, 0);
    if (!stop_reason_.empty()) {
      fail(stop_reason_);
      return;
    }
    if (complete_) {
      stats_.ended = true;
      state_ = State::Done;
      close();
      return;
    }
    fail("server closed the connection in the middle of the body");
    return;
  }
  fail("server closed the connection before the response");
}

int HttpFlvClient::on_headers_complete(http_parser* p) noexcept {
  auto* self = static_cast<HttpFlvClient*>(p->data);
  self->state_ = State::Streaming;
  if (p->status_code != kStatusOk) {
    self->stop_reason_ = "HTTP " + std::to_string(p->status_code);
    http_parser_pause(p, 1);
  }
  return 0;
}

int HttpFlvClient::on_body(http_parser* p, const char* at, size_t len) noexcept {
  auto* self = static_cast<HttpFlvClient*>(p->data);
  if (!guarded("body", [&] { self->handle_body({reinterpret_cast<const uint8_t*>(at), len}); })) {
    if (self->stop_reason_.empty()) self->stop_reason_ = "internal error while reading the body";
  }
  if (!self->stop_reason_.empty()) http_parser_pause(p, 1);
  return 0;
}

int HttpFlvClient::on_message_complete(http_parser* p) noexcept {
  auto* self = static_cast<HttpFlvClient*>(p->data);
  self->complete_ = true;
  // Whatever follows would be another response: not ours to read.
  http_parser_pause(p, 1);
  return 0;
}

void HttpFlvClient::handle_body(std::span<const uint8_t> bytes) {
  auto tags = flv_.feed(bytes);
  if (!tags) {
    stop_reason_ = "flv: " + tags.error().message();
    return;
  }
  if (tags->empty()) return;
  const int64_t now = now_ns();
  for (auto& tag : *tags) {
    monitor_.on_media(tag.type, tag.timestamp, tag.body.span(), now, stats_);
    if (tag.type == kAudio || tag.type == kVideo) stats_.ok = !stats_.failed;
  }
}

void HttpFlvClient::tick(int64_t now_ns) {
  if (state_ != State::Streaming) return;
  if (stats_.ok && !stats_.ended) monitor_.check(now_ns, stats_);
  // Batching starts after the first picture so that it never delays what TTFF measures.
  if (stats_.ttff_ns >= 0) {
    if (const int64_t lowat = batching_.update(now_ns, stats_.bytes_in); lowat > 0)
      set_receive_low_water(static_cast<uint32_t>(lowat));
  }
}

void HttpFlvClient::set_receive_low_water(uint32_t bytes) {
  uv_os_fd_t fd;
  if (!connected_ || closing_ || uv_fileno(reinterpret_cast<uv_handle_t*>(&tcp_), &fd) != 0) return;
  const int lowat = static_cast<int>(bytes);
  setsockopt(fd, SOL_SOCKET, SO_RCVLOWAT, &lowat, sizeof lowat);
}

void HttpFlvClient::fail(const std::string& reason) {
  if (!stopping_ && !stats_.ended) mark_failed(stats_, reason);
  if (stats_.failed) stats_.ok = false;
  state_ = State::Done;
  close();
}

void HttpFlvClient::stop() {
  stopping_ = true;
  if (state_ == State::Idle) {
    mark_failed(stats_, "not started before the end (ramp-up too slow for the duration)");
  } else if (!stats_.ok && !stats_.failed && !stats_.ended) {
    mark_failed(stats_, "no media before the end");
  }
  state_ = State::Done;
  close();
}

void HttpFlvClient::close() {
  if (closing_) return;
  closing_ = true;
  uv_close(reinterpret_cast<uv_handle_t*>(&tcp_), nullptr);
}

}  // namespace sluice::bench
