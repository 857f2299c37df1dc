// RtmpTestEnd: one end of an RTMP connection in a unit test, the other end of the server code under
// test: a libuv TCP handle and a protocol::Session (server or client side) that reads, feeds the
// session, hands each event to on_event and writes the session's output. Made with new; it deletes
// itself once its handle has closed, after telling on_closed.
#pragma once

#include <uv.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "protocol/session.hpp"

namespace sluice::test {

class RtmpTestEnd {
 public:
  RtmpTestEnd(uv_loop_t* loop, protocol::SessionRole role) : session(protocol::options_for(role)) {
    uv_tcp_init(loop, &tcp);
    tcp.data = this;
  }
  RtmpTestEnd(const RtmpTestEnd&) = delete;
  RtmpTestEnd& operator=(const RtmpTestEnd&) = delete;

  uv_tcp_t tcp{};
  protocol::Session session;
  std::function<void(protocol::SessionEvent&)> on_event;
  // The connection ended: `why` is "eof", "protocol error: ..." or "closed here". Then the object goes.
  std::function<void(const std::string& why)> on_closed;

  uv_stream_t* stream() { return reinterpret_cast<uv_stream_t*>(&tcp); }
  void start_reading() { uv_read_start(stream(), &RtmpTestEnd::on_alloc, &RtmpTestEnd::on_read); }
  // Writes what the session has queued.
  void flush() {
    if (closing_ || !session.has_output()) return;
    auto* w = new WriteReq;
    session.drain_output(w->bytes);
    uv_buf_t buf = uv_buf_init(reinterpret_cast<char*>(w->bytes.data()), static_cast<unsigned>(w->bytes.size()));
    if (uv_write(&w->req, stream(), &buf, 1, &RtmpTestEnd::on_written) != 0) delete w;
  }
  void close(const std::string& why = "closed here") {
    if (closing_) return;
    closing_ = true;
    why_ = why;
    uv_close(reinterpret_cast<uv_handle_t*>(&tcp), &RtmpTestEnd::on_handle_closed);
  }
  bool closing() const { return closing_; }

 private:
  struct WriteReq {
    uv_write_t req{};
    std::vector<uint8_t> bytes;
  };

  static void on_alloc(uv_handle_t*, size_t, uv_buf_t* buf) {
    static char scratch[64 * 1024];  // reads are handled before the next one: one buffer will do
    *buf = uv_buf_init(scratch, sizeof scratch);
  }
  static void on_read(uv_stream_t* s, ssize_t nread, const uv_buf_t* buf) {
    auto* self = static_cast<RtmpTestEnd*>(s->data);
    if (nread < 0) return self->close("eof");
    std::vector<protocol::SessionEvent> events;
    auto fed = self->session.feed({reinterpret_cast<const uint8_t*>(buf->base), static_cast<size_t>(nread)}, events);
    for (auto& e : events) {
      if (self->closing_) return;
      if (self->on_event) self->on_event(e);
    }
    if (!fed) return self->close("protocol error: " + fed.error().message());
    self->flush();
  }
  static void on_written(uv_write_t* req, int) { delete reinterpret_cast<WriteReq*>(req); }
  static void on_handle_closed(uv_handle_t* h) {
    auto* self = static_cast<RtmpTestEnd*>(h->data);
    if (self->on_closed) self->on_closed(self->why_);
    delete self;
  }

  bool closing_ = false;
  std::string why_;
};

}  // namespace sluice::test
