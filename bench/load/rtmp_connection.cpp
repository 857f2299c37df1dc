#include "bench/load/rtmp_connection.hpp"

#include <sys/socket.h>

#include <array>
#include <variant>

#include "bench/load/clock.hpp"

namespace sluice::bench {

namespace {

// One read buffer and one event vector for every connection of the loop: libuv hands a read to
// exactly one read callback, which consumes it completely before returning, so nothing is ever
// shared between two connections at once. 64 KiB is what libuv suggests and what one recvmsg
// can usefully fill on loopback.
constexpr size_t kReadBufferSize = 64 * 1024;
alignas(64) std::array<char, kReadBufferSize> g_read_buffer;
std::vector<protocol::SessionEvent> g_events;
uint64_t g_reads = 0;
uint64_t g_read_bytes = 0;
// TLS: the plaintext of one read, and the plaintext of one write batch (shared the same way).
std::vector<uint8_t> g_plain_in;
std::vector<uint8_t> g_plain_out;
std::string g_tls_negotiated;

std::string uv_error_text(const char* what, int status) { return std::string(what) + ": " + uv_strerror(status); }

}  // namespace

RtmpConnection::RtmpConnection(uv_loop_t* loop, RtmpConnectionHandler& handler, protocol::SessionOptions options)
    : handler_(handler), session_(std::move(options)) {
  // The handle is initialised here so close() is always valid, even before start().
  uv_tcp_init(loop, &tcp_);
  tcp_.data = this;
}

int RtmpConnection::start(const sockaddr* addr, const std::string& tls_server_name) {
  if (!tls_server_name.empty()) tls_ = std::make_unique<TlsClient>(tls_server_name);
  connect_req_.data = this;
  const int rc = uv_tcp_connect(&connect_req_, &tcp_, addr, on_connect);
  if (rc != 0) {
    close();
    return rc;
  }
  return 0;
}

void RtmpConnection::on_connect(uv_connect_t* req, int status) noexcept {
  auto* self = static_cast<RtmpConnection*>(req->data);
  if (self->closing_) return;  // closed locally while connecting: status is UV_ECANCELED
  if (status != 0) {
    self->fail(uv_error_text("connect", status));
    return;
  }
  self->connected_ = true;
  // Small messages (commands, acknowledgements, the publisher's audio) must not wait for Nagle.
  uv_tcp_nodelay(&self->tcp_, 1);
  if (int rc = uv_read_start(reinterpret_cast<uv_stream_t*>(&self->tcp_), on_alloc, on_read); rc != 0) {
    self->fail(uv_error_text("read_start", rc));
    return;
  }
  if (self->tls_) {
    self->tls_start_ns_ = now_ns();
    if (auto r = self->tls_->start(); !r) {
      self->fail("tls: " + r.error().message());
      return;
    }
  }
  const bool ok = guarded("on_tcp_connected", [&] {
    self->handler_.on_tcp_connected();
    self->flush();
  });
  if (!ok) self->fail("internal error after connect");
}

void RtmpConnection::set_receive_low_water(uint32_t bytes) {
  uv_os_fd_t fd;
  if (!connected_ || closing_ || uv_fileno(reinterpret_cast<uv_handle_t*>(&tcp_), &fd) != 0) return;
  const int lowat = static_cast<int>(bytes);
  setsockopt(fd, SOL_SOCKET, SO_RCVLOWAT, &lowat, sizeof lowat);
}

uint64_t RtmpConnection::total_reads() { return g_reads; }
uint64_t RtmpConnection::total_read_bytes() { return g_read_bytes; }
const std::string& RtmpConnection::tls_negotiated() { return g_tls_negotiated; }

void RtmpConnection::on_alloc(uv_handle_t*, size_t, uv_buf_t* buf) noexcept {
  buf->base = g_read_buffer.data();
  buf->len = g_read_buffer.size();
}

void RtmpConnection::on_read(uv_stream_t* stream, ssize_t nread, const uv_buf_t* buf) noexcept {
  auto* self = static_cast<RtmpConnection*>(stream->data);
  if (nread > 0) {
    ++g_reads;
    g_read_bytes += static_cast<uint64_t>(nread);
    const bool ok = guarded(
        "read", [&] { self->handle_read(reinterpret_cast<const uint8_t*>(buf->base), static_cast<size_t>(nread)); });
    // Whatever happened, no payload of this read may outlive it.
    g_events.clear();
    if (!ok) self->fail("internal error while reading");
    return;
  }
  if (nread == UV_EOF) {
    self->fail("server closed the connection");
  } else if (nread < 0) {
    self->fail(uv_error_text("read", static_cast<int>(nread)));
  }
}

void RtmpConnection::handle_read(const uint8_t* data, size_t len) {
  bytes_in_ += len;
  std::span<const uint8_t> in{data, len};
  Result<void> tls_ok;
  if (tls_) {
    g_plain_in.clear();
    const bool was_done = tls_->handshake_done();
    tls_ok = tls_->feed(in, g_plain_in);
    if (!was_done && tls_->handshake_done()) {
      tls_handshake_ns_ = now_ns() - tls_start_ns_;
      if (g_tls_negotiated.empty()) g_tls_negotiated = tls_->negotiated();
    }
    in = g_plain_in;  // the plaintext decoded before an error is still delivered
  }
  g_events.clear();
  auto fed = in.empty() ? Result<void>() : session_.feed(in, g_events);
  // Events decoded before a protocol error are still real: deliver them first.
  for (auto& event : g_events) {
    if (closing_) break;
    handler_.on_session_event(event);
  }
  g_events.clear();
  if (closing_) return;
  if (!fed) {
    fail("protocol: " + fed.error().message());
    return;
  }
  if (!tls_ok) {
    fail("tls: " + tls_ok.error().message());
    return;
  }
  flush();
}

void RtmpConnection::flush() {
  if (!connected_ || closing_ || writing_) return;
  if (out_.empty()) {
    if (tls_) {
      // The whole batch becomes a few TLS records; handshake messages come first, in order.
      g_plain_out.clear();
      session_.drain_output(g_plain_out);
      auto r = tls_->write(g_plain_out, out_);
      g_plain_out.clear();
      if (!r) {
        fail("tls: " + r.error().message());
        return;
      }
    } else {
      session_.drain_output(out_);  // swaps buffers: no copy
    }
  }
  if (out_.empty()) return;
  start_write();
}

void RtmpConnection::start_write() {
  // Fast path: loopback sockets usually take the whole batch at once, with no request at all.
  uv_buf_t buf =
      uv_buf_init(reinterpret_cast<char*>(out_.data() + out_offset_), static_cast<unsigned>(out_.size() - out_offset_));
  const int n = uv_try_write(reinterpret_cast<uv_stream_t*>(&tcp_), &buf, 1);
  if (n > 0) {
    bytes_out_ += static_cast<uint64_t>(n);
    out_offset_ += static_cast<size_t>(n);
    if (out_offset_ == out_.size()) {
      out_.clear();
      out_offset_ = 0;
      return;
    }
  } else if (n != UV_EAGAIN && n != UV_ENOSYS) {
    fail(uv_error_text("write", n));
    return;
  }
  buf =
      uv_buf_init(reinterpret_cast<char*>(out_.data() + out_offset_), static_cast<unsigned>(out_.size() - out_offset_));
  write_req_.data = this;
  if (int rc = uv_write(&write_req_, reinterpret_cast<uv_stream_t*>(&tcp_), &buf, 1, on_write); rc != 0) {
    fail(uv_error_text("write", rc));
    return;
  }
  writing_ = true;
}

void RtmpConnection::on_write(uv_write_t* req, int status) noexcept {
  auto* self = static_cast<RtmpConnection*>(req->data);
  self->writing_ = false;
  if (status == UV_ECANCELED || self->closing_) return;
  if (status != 0) {
    self->fail(uv_error_text("write", status));
    return;
  }
  self->bytes_out_ += self->out_.size() - self->out_offset_;
  self->out_.clear();
  self->out_offset_ = 0;
  if (!guarded("flush", [&] { self->flush(); })) self->fail("internal error while writing");
}

size_t RtmpConnection::write_backlog() const {
  return (out_.size() - out_offset_) + session_.output_size() + (tls_ ? tls_->pending() : 0) +
         uv_stream_get_write_queue_size(reinterpret_cast<const uv_stream_t*>(&tcp_));
}

void RtmpConnection::fail(const std::string& reason) {
  if (closing_) return;
  close();
  handler_.on_connection_closed(reason);
}

void RtmpConnection::close() {
  if (closing_) return;
  closing_ = true;
  uv_close(reinterpret_cast<uv_handle_t*>(&tcp_), on_close);
}

void RtmpConnection::on_close(uv_handle_t* handle) noexcept {
  auto* self = static_cast<RtmpConnection*>(handle->data);
  // Free what a closed connection no longer needs; the object itself lives to the run's end.
  self->out_ = std::vector<uint8_t>();
}

}  // namespace sluice::bench
