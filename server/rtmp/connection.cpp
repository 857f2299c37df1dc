// RtmpConnection: socket I/O, the write path, timeouts. The RTMP command handling is in rtmp_handlers.cpp.
#include "server/rtmp/connection.hpp"

#include <unistd.h>

#include "server/rtmp/live_player.hpp"
#include "server/rtmp/live_publisher.hpp"
#include "server/io/logging.hpp"
#include "server/io/net_address.hpp"
#include "server/server.hpp"
#include "server/rtmp/vod_player.hpp"

namespace sluice::server {

namespace {
// One batch carries at most this much, so one fast connection cannot monopolise a loop iteration.
constexpr size_t kBatchMaxBytes = 512 * 1024;

protocol::SessionOptions session_options(const config::Config& cfg) {
  protocol::SessionOptions o;
  o.role = protocol::SessionRole::Server;
  o.chunk_size = cfg.rtmp.chunk_size;
  o.window_ack_size = cfg.rtmp.window_ack_size;
  o.chunk_limits.max_message_size = cfg.rtmp.max_message_size;
  return o;
}
}  // namespace

RtmpConnection::RtmpConnection(Server& server, uint64_t id)
    : server_(server), id_(id), session_(session_options(server.config())) {
  started_ms_ = last_receive_ms_ = last_ping_ms_ = server.now_ms();
}

int RtmpConnection::accept(uv_stream_t* listener) {
  uv_tcp_init(server_.loop(), &tcp_);
  tcp_.data = this;
  int rc = uv_accept(listener, reinterpret_cast<uv_stream_t*>(&tcp_));
  if (rc != 0) return rc;
  return start_reading();
}

int RtmpConnection::adopt(int fd) {
  uv_tcp_init(server_.loop(), &tcp_);
  tcp_.data = this;
  int rc = uv_tcp_open(&tcp_, fd);
  if (rc != 0) {
    ::close(fd);
    return rc;
  }
  return start_reading();
}

int RtmpConnection::start_reading() {
  uv_tcp_nodelay(&tcp_, 1);
  PeerAddress peer = peer_address(&tcp_);
  peer_ = std::move(peer.text);
  peer_address_ = std::move(peer.raw);
  SLUICE_LOG_DEBUG("conn={} event=accept peer={}", id_, peer_);
  return uv_read_start(reinterpret_cast<uv_stream_t*>(&tcp_), &RtmpConnection::on_alloc, &RtmpConnection::on_read);
}

void RtmpConnection::on_alloc(uv_handle_t* handle, size_t, uv_buf_t* buf) {
  auto* self = static_cast<RtmpConnection*>(handle->data);
  *buf = self->server_.read_buffer();
}

void RtmpConnection::on_read(uv_stream_t* stream, ssize_t nread, const uv_buf_t* buf) {
  auto* self = static_cast<RtmpConnection*>(stream->data);
  if (nread == 0) return;
  if (nread < 0) {
    self->close(nread == UV_EOF ? "peer closed" : std::string("read error: ") + uv_strerror(static_cast<int>(nread)));
    return;
  }
  self->on_bytes({reinterpret_cast<const uint8_t*>(buf->base), static_cast<size_t>(nread)});
}

void RtmpConnection::on_bytes(std::span<const uint8_t> bytes) {
  if (closing_) return;
  bytes_in_ += bytes.size();
  last_receive_ms_ = server_.now_ms();
  events_.clear();
  auto fed = session_.feed(bytes, events_);
  for (auto& ev : events_) {
    if (closing_) break;
    handle_event(ev);
  }
  events_.clear();
  if (closing_) return;
  if (!fed) {
    SLUICE_LOG_WARN("conn={} peer={} event=protocol_error error=\"{}\"", id_, peer_, fed.error().message());
    close("protocol error: " + fed.error().message());
    return;
  }
  if (session_.has_output()) request_flush();
}

void RtmpConnection::request_flush() {
  if (!closing_) server_.request_flush(this);
}

void RtmpConnection::request_held_flush() {
  if (!closing_) server_.request_held_flush(this);
}

size_t RtmpConnection::write_queue_bytes() const {
  return uv_stream_get_write_queue_size(reinterpret_cast<const uv_stream_t*>(&tcp_));
}

bool RtmpConnection::can_write_now() const {
  return !writing_ && !ring_queued_ && !closing_ && pending_close_reason.empty() && !session_.has_output() &&
         write_queue_bytes() == 0;
}

bool RtmpConnection::write_now(std::span<const uint8_t> bytes) {
  uv_buf_t buf = uv_buf_init(reinterpret_cast<char*>(const_cast<uint8_t*>(bytes.data())),
                             static_cast<unsigned>(bytes.size()));
  int n = uv_try_write(reinterpret_cast<uv_stream_t*>(&tcp_), &buf, 1);
  if (n < 0 && n != UV_EAGAIN) {
    // Deferred: the caller (a VOD player) is still on the stack and must not be destroyed.
    schedule_close(std::string("write failed: ") + uv_strerror(n));
    return false;
  }
  size_t done = n > 0 ? static_cast<size_t>(n) : 0;
  bytes_out_ += done;
  if (done == bytes.size()) return true;
  session_.queue_raw_output(bytes.subspan(done));
  request_flush();
  return false;
}

void RtmpConnection::flush() {
  if (ring_queued_) {
    // The last batch is still queued on the ring: this one follows in the next pass.
    request_flush();
    return;
  }
  if (writing_ || closing_) return;
  batch_.clear();
  if (session_.has_output()) {
    std::vector<uint8_t>& arena = batch_.arena();
    size_t old = arena.size();
    session_.drain_output(arena);
    batch_.after_arena_append(old);
  }
  more_to_flush_ = false;
  for (auto& p : players_) {
    if (batch_.bytes() >= kBatchMaxBytes) {
      more_to_flush_ = true;
      break;
    }
    more_to_flush_ |= p->fill(batch_, session_.chunk_writer(), kBatchMaxBytes - batch_.bytes());
  }
  if (batch_.empty()) {
    if (session_.closing()) close("closed after reply");
    return;
  }
  auto bufs = batch_.finalize();
  bytes_out_ += batch_.bytes();
  // Inside the server's flush pass the write joins the other players' on the ring (one system
  // call for all of them); its result comes back through on_ring_write.
  WriteRing* ring = server_.batching_ring();
  if (ring != nullptr && ring->queue(reinterpret_cast<uv_stream_t*>(&tcp_), bufs, this)) {
    ring_queued_ = true;
    return;
  }
  // Usually the socket takes everything at once: a write with no request, no callback and no
  // epoll change (uv_write would re-arm the watcher, one more syscall per write).
  finish_write(uv_try_write(reinterpret_cast<uv_stream_t*>(&tcp_), bufs.data(), static_cast<unsigned>(bufs.size())));
}

void RtmpConnection::on_ring_write(int result) {
  ring_queued_ = false;
  if (closing_) return;
  finish_write(result);
}

void RtmpConnection::finish_write(int result) {
  if (result < 0 && result != UV_EAGAIN) {
    close(std::string("write failed: ") + uv_strerror(result));
    return;
  }
  size_t done = result > 0 ? static_cast<size_t>(result) : 0;
  if (done == batch_.bytes()) {
    batch_.clear();
    if (more_to_flush_) request_flush();
    resume_vod_players();
    return;
  }
  // The rest waits in libuv's queue; the callback flushes again if anything is left.
  auto rest = batch_.unwritten(done);
  batch_.req.data = this;
  int rc = uv_write(&batch_.req, reinterpret_cast<uv_stream_t*>(&tcp_), rest.data(), static_cast<unsigned>(rest.size()),
                    &RtmpConnection::on_write);
  if (rc != 0) {
    close(std::string("write failed: ") + uv_strerror(rc));
    return;
  }
  writing_ = true;
}

void RtmpConnection::on_write(uv_write_t* req, int status) {
  auto* self = static_cast<RtmpConnection*>(req->data);
  self->writing_ = false;
  self->batch_.clear();
  if (status < 0) {
    if (status != UV_ECANCELED) self->close(std::string("write error: ") + uv_strerror(status));
    return;
  }
  if (self->closing_) return;
  // Whatever queued up while this batch was in flight goes out now, as the next batch, unless it
  // is live media being held for a larger write (the hold timer flushes it).
  if (!self->in_delayed_list) self->flush();
  self->resume_vod_players();
}

void RtmpConnection::resume_vod_players() {
  // VOD players wait for the connection to drain before reading more of their file.
  for (size_t i = 0; i < vod_players_.size() && !closing_; ++i) vod_players_[i]->on_drain();
}

void RtmpConnection::on_tick(uint64_t now) {
  const auto& rtmp = server_.config().rtmp;
  if (!session_.handshake_done() || !connected_) {
    if (now - started_ms_ > static_cast<uint64_t>(rtmp.handshake_timeout.count())) {
      close(session_.handshake_done() ? "connect timeout" : "handshake timeout");
    }
    return;
  }
  uint64_t silent = now - last_receive_ms_;
  if (rtmp.idle_timeout.count() > 0 && silent > static_cast<uint64_t>(rtmp.idle_timeout.count())) {
    close("idle timeout (nothing received for " + std::to_string(silent / 1000) + " s)");
    return;
  }
  // Players send little; a ping tells live peers from dead ones before the idle timeout.
  if (rtmp.ping_interval.count() > 0 && silent > static_cast<uint64_t>(rtmp.ping_interval.count()) &&
      now - last_ping_ms_ > static_cast<uint64_t>(rtmp.ping_interval.count())) {
    last_ping_ms_ = now;
    session_.send_ping_request(static_cast<uint32_t>(now));
    request_flush();
  }
}

void RtmpConnection::shutdown_gracefully() {
  if (closing_) return;
  end_streams();
  session_.close_after_flush();
  request_flush();
}

void RtmpConnection::schedule_close(std::string reason) {
  if (closing_ || !pending_close_reason.empty()) return;
  pending_close_reason = std::move(reason);
  server_.request_flush(this);
}

void RtmpConnection::end_streams() {
  // Publishers first: ending a publication notifies its players (maybe on this connection).
  publishers_.clear();
  players_.clear();
  vod_players_.clear();
}

void RtmpConnection::close(const std::string& reason) {
  if (closing_) return;
  if (ring_queued_) {
    // A batch queued on the ring goes out (or fails) while the socket is still open.
    server_.submit_writes();
    if (closing_) return;
  }
  end_streams();
  closing_ = true;
  server_.cancel_flush(this);
  uint64_t duration = server_.now_ms() - started_ms_;
  SLUICE_LOG_INFO("conn={} peer={} app={} event=close reason=\"{}\" bytes_in={} bytes_out={} duration_ms={}", id_,
                  peer_, app_.empty() ? "-" : app_, reason, bytes_in_, bytes_out_, duration);
  if (uv_is_active(reinterpret_cast<uv_handle_t*>(&tcp_))) uv_read_stop(reinterpret_cast<uv_stream_t*>(&tcp_));
  if (tcp_.loop != nullptr) {
    uv_close(reinterpret_cast<uv_handle_t*>(&tcp_), &RtmpConnection::on_closed);
  } else {
    server_.on_connection_closed(this);
    delete this;
  }
}

void RtmpConnection::on_closed(uv_handle_t* handle) {
  *static_cast<RtmpConnection*>(handle->data)->alive_ = false;
  auto* self = static_cast<RtmpConnection*>(handle->data);
  self->server_.on_connection_closed(self);
  delete self;
}

}  // namespace sluice::server
