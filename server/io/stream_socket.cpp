#include "server/io/stream_socket.hpp"

#include <unistd.h>

#include "server/io/guard_counters.hpp"
#include "server/io/net_address.hpp"
#include "server/io/uv_handle.hpp"

namespace sluice::server {

StreamSocket::StreamSocket(LoopContext& loop, uint64_t id) : loop_(loop), id_(id) {
  started_ms_ = last_write_ms_ = loop.now_ms();
}

bool StreamSocket::open_accepted(int fd, std::shared_ptr<const TlsContext> tls, std::optional<PeerAddress> peer) {
  if (tls) use_tls(std::move(tls));
  if (peer) use_peer(std::move(*peer));
  const int rc = adopt(fd);
  if (rc == 0) return true;
  close(std::string("accept failed: ") + uv_strerror(rc));
  return false;
}

int StreamSocket::adopt(int fd) {
  accepted_ = true;
  uv_tcp_init(loop_.loop(), &tcp_);
  tcp_.data = this;
  tcp_initialized_ = true;
  int rc = uv_tcp_open(&tcp_, fd);
  if (rc != 0) {
    ::close(fd);
    return rc;
  }
  return open_accepted();
}

int StreamSocket::connect(const sockaddr* addr) {
  uv_tcp_init(loop_.loop(), &tcp_);
  tcp_.data = this;
  tcp_initialized_ = true;
  connect_req_.data = this;
  int rc = uv_tcp_connect(&connect_req_, &tcp_, addr, &StreamSocket::on_connected);
  if (rc == 0) retain();  // until the callback, which runs even when the handle closes first
  return rc;
}

void StreamSocket::on_connected(uv_connect_t* req, int status) {
  auto* self = static_cast<StreamSocket*>(req->data);
  Ref keep = self->take_retained();
  if (self->closing_) return;
  if (status < 0) {
    self->close(std::string("connect failed: ") + uv_strerror(status));
    return;
  }
  if (int rc = self->open_accepted(); rc != 0) self->close(std::string("read failed: ") + uv_strerror(rc));
}

int StreamSocket::open_accepted() {
  if (nodelay_at_open()) set_nodelay();
  if (!peer_given_) {
    PeerAddress peer = server::peer_address(&tcp_);
    peer_ = std::move(peer.text);
    peer_address_ = std::move(peer.raw);
  }
  on_open();
  return start_reading();
}

void StreamSocket::set_nodelay() {
  if (nodelay_ || !tcp_initialized_) return;
  uv_tcp_nodelay(&tcp_, 1);
  nodelay_ = true;
}

// ---------------------------------------------------------------------------------------------
// Reading.

int StreamSocket::start_reading() {
  if (reading_ || closing_) return 0;
  int rc = uv_read_start(as_stream(&tcp_), &StreamSocket::on_alloc, &StreamSocket::on_read);
  reading_ = rc == 0;
  return rc;
}

void StreamSocket::stop_reading() {
  if (!reading_) return;
  uv_read_stop(as_stream(&tcp_));
  reading_ = false;
}

void StreamSocket::on_alloc(uv_handle_t* handle, size_t, uv_buf_t* buf) {
  StreamSocket* self = owner_of<StreamSocket>(handle);
  if (self->accepted_ && self->handshake_pending() && !self->loop_.handshakes().admit()) {
    *buf = uv_buf_init(nullptr, 0);  // the bytes stay in the kernel: on_read gets UV_ENOBUFS
    return;
  }
  *buf = self->loop_.read_buffer();
}

void StreamSocket::resume_handshake_reads() {
  handshake_deferred_ = false;
  if (!closing_) start_reading();
}

void StreamSocket::on_read(uv_stream_t* stream, ssize_t nread, const uv_buf_t* buf) {
  auto* self = owner_of<StreamSocket>(stream);
  if (nread == 0 || self->closing_) return;
  if (nread == UV_ENOBUFS) {
    // This iteration's handshake reads are used up: wait for a later one.
    self->stop_reading();
    if (!self->handshake_deferred_) {
      self->handshake_deferred_ = true;
      self->loop_.handshakes().defer(self);
      GuardCounters::bump(GuardEvent::HandshakeDeferred);
    }
    return;
  }
  if (nread < 0) {
    if (nread == UV_EOF) {
      self->reading_ = false;  // libuv stops reading at EOF
      self->on_peer_closed();
    } else {
      self->close(std::string("read error: ") + uv_strerror(static_cast<int>(nread)));
    }
    return;
  }
  self->bytes_in_ += static_cast<uint64_t>(nread);
  std::span<const uint8_t> bytes{reinterpret_cast<const uint8_t*>(buf->base), static_cast<size_t>(nread)};
  if (self->tls_) {
    self->on_tls_bytes(bytes);
  } else {
    self->on_bytes(bytes);
  }
}

// ---------------------------------------------------------------------------------------------
// TLS.

struct StreamSocket::TlsWrite {
  uv_write_t req{};
  StreamSocket* socket = nullptr;
  std::vector<uint8_t> bytes;
};

void StreamSocket::use_peer(PeerAddress peer) {
  peer_ = std::move(peer.text);
  peer_address_ = std::move(peer.raw);
  peer_given_ = true;
}

void StreamSocket::use_tls(std::shared_ptr<const TlsContext> context, const std::string& server_name) {
  tls_ = std::make_unique<TlsTransform>(std::move(context), server_name);
}

void StreamSocket::on_tls_bytes(std::span<const uint8_t> cipher) {
  tls_plain_.clear();
  auto r = tls_->feed(cipher, tls_plain_);
  send_tls_output();  // the handshake's answers, alerts
  if (!r) {
    close(r.error().code == Errc::Closed ? "peer closed (TLS close_notify)" : "TLS: " + r.error().message());
    return;
  }
  if (!tls_plain_.empty() && !closing_) {
    std::vector<uint8_t> plain = std::move(tls_plain_);
    tls_plain_.clear();
    on_bytes(plain);
    if (tls_plain_.empty()) tls_plain_ = std::move(plain);  // keep the capacity
  }
}

// Ciphertext out: at once when the socket takes it, the rest through one uv_write in flight.
void StreamSocket::send_tls_output() {
  if (closing_) return;
  tls_->take_output(tls_out_);
  // Behind a write in flight (libuv's or the ring's): sent when it completes.
  if (tls_out_.empty() || writing_ || ring_queued_) return;
  uv_buf_t buf = uv_buf_init(reinterpret_cast<char*>(tls_out_.data()), static_cast<unsigned>(tls_out_.size()));
  int n = write_queue_bytes() == 0 ? uv_try_write(as_stream(&tcp_), &buf, 1) : UV_EAGAIN;
  if (n < 0 && n != UV_EAGAIN) {
    schedule_close(std::string("write failed: ") + uv_strerror(n));
    return;
  }
  const size_t done = n > 0 ? static_cast<size_t>(n) : 0;
  if (done == tls_out_.size()) {
    loop_.give_cipher_buffer(tls_out_);
    return;
  }
  auto* w = new TlsWrite;
  w->bytes.assign(tls_out_.begin() + static_cast<std::ptrdiff_t>(done), tls_out_.end());
  loop_.give_cipher_buffer(tls_out_);
  w->req.data = w;
  w->socket = this;
  uv_buf_t rest = uv_buf_init(reinterpret_cast<char*>(w->bytes.data()), static_cast<unsigned>(w->bytes.size()));
  int rc = uv_write(&w->req, as_stream(&tcp_), &rest, 1, &StreamSocket::on_tls_written);
  if (rc != 0) {
    delete w;
    schedule_close(std::string("write failed: ") + uv_strerror(rc));
    return;
  }
  writing_ = true;
}

void StreamSocket::on_tls_written(uv_write_t* req, int status) {
  auto* w = static_cast<TlsWrite*>(req->data);
  StreamSocket* self = w->socket;
  delete w;
  self->writing_ = false;
  if (status < 0) {
    if (status != UV_ECANCELED) self->close(std::string("write error: ") + uv_strerror(status));
    return;
  }
  if (self->closing_) return;
  self->write_done(true);
}

// A TLS socket's batch: encrypted as a whole (so the records are large, not one per chunk
// header); when Sluice seals the records its pieces are copied once, into their records
// (TlsTransform). Inside a flush pass the ciphertext joins the other sockets' writes on the ring
// (one system call for all of them), else it is sent at once.
void StreamSocket::send_tls_batch(std::span<const uv_buf_t> bufs) {
  tls_pieces_.clear();
  for (const uv_buf_t& b : bufs) tls_pieces_.emplace_back(reinterpret_cast<const uint8_t*>(b.base), b.len);
  if (tls_out_.capacity() == 0) tls_out_ = loop_.take_cipher_buffer();
  auto r = tls_->write(tls_pieces_, tls_out_);
  batch_.clear();  // after the write: the pieces may point into the batch's own buffers
  if (!r) {
    close("TLS: " + r.error().message());
    return;
  }
  WriteRing* ring = loop_.flush().batching_ring();
  if (ring != nullptr && !writing_ && write_queue_bytes() == 0 && !tls_out_.empty()) {
    tls_ring_bytes_.swap(tls_out_);  // tls_ring_bytes_ is empty here, so tls_out_ becomes empty
    // The ring reads the buffer list at submit time: it lives in the socket, not on this stack.
    tls_ring_buf_ =
        uv_buf_init(reinterpret_cast<char*>(tls_ring_bytes_.data()), static_cast<unsigned>(tls_ring_bytes_.size()));
    if (ring->queue(as_stream(&tcp_), std::span<const uv_buf_t>(&tls_ring_buf_, 1), this, /*made_for_it=*/true)) {
      ring_queued_ = true;
      return;
    }
    tls_out_.swap(tls_ring_bytes_);
  }
  send_tls_output();
  if (!writing_ && !closing_) write_done(false);
}

// The ring wrote (some of) a TLS socket's ciphertext: the rest, and what was made meanwhile, go
// out through send_tls_output().
void StreamSocket::finish_tls_ring_write(int result) {
  if (result < 0 && result != UV_EAGAIN) {
    close(std::string("write failed: ") + uv_strerror(result));
    return;
  }
  const size_t done = result > 0 ? static_cast<size_t>(result) : 0;
  if (done < tls_ring_bytes_.size()) {
    tls_out_.insert(tls_out_.begin(), tls_ring_bytes_.begin() + static_cast<std::ptrdiff_t>(done),
                    tls_ring_bytes_.end());
  }
  loop_.give_cipher_buffer(tls_ring_bytes_);
  send_tls_output();
  if (!writing_ && !closing_) write_done(false);
}

// ---------------------------------------------------------------------------------------------
// Writing.

void StreamSocket::request_flush() {
  if (!closing_) loop_.flush().flush_soon(this);
}

void StreamSocket::request_held_flush() {
  if (!closing_) loop_.flush().flush_held(this);
}

size_t StreamSocket::write_queue_bytes() const { return uv_stream_get_write_queue_size(as_stream(&tcp_)); }

bool StreamSocket::can_write_now() const {
  return !writing_ && !ring_queued_ && !closing_soon() && !has_pending_output() && write_queue_bytes() == 0;
}

bool StreamSocket::write_or_queue(std::span<const uint8_t> bytes) {
  if (tls_ || !can_write_now()) {  // TLS: the bytes go out encrypted with the next batch
    keep_unwritten(bytes);
    request_flush();
    return false;
  }
  uv_buf_t buf =
      uv_buf_init(reinterpret_cast<char*>(const_cast<uint8_t*>(bytes.data())), static_cast<unsigned>(bytes.size()));
  int n = uv_try_write(as_stream(&tcp_), &buf, 1);
  if (n < 0 && n != UV_EAGAIN) {
    schedule_close(std::string("write failed: ") + uv_strerror(n));
    return false;
  }
  size_t done = n > 0 ? static_cast<size_t>(n) : 0;
  bytes_out_ += done;
  if (done == bytes.size()) return true;
  keep_unwritten(bytes.subspan(done));
  request_flush();
  return false;
}

void StreamSocket::flush() {
  if (closing_) return;
  if (ring_queued_) {
    // The last batch is still queued on the ring: this one follows in the next pass.
    request_flush();
    return;
  }
  if (!before_flush() || closing_ || writing_) return;
  batch_.clear();
  more_to_flush_ = fill(batch_, kBatchMaxBytes);
  if (closing_) return;
  if (batch_.empty()) {
    if (tls_) send_tls_output();  // what the handshake or an alert left to send
    on_nothing_to_write();
    return;
  }
  auto bufs = batch_.finalize();
  bytes_out_ += batch_.bytes();
  if (tls_) return send_tls_batch(bufs);
  // Inside a flush pass the write joins the other sockets' on the ring (one system call for all
  // of them); its result comes back through on_ring_write.
  WriteRing* ring = loop_.flush().batching_ring();
  if (ring != nullptr && ring->queue(as_stream(&tcp_), bufs, this)) {
    ring_queued_ = true;
    return;
  }
  // Usually the socket takes everything at once: a write with no request, no callback and no
  // epoll change (uv_write would re-arm the watcher, one more syscall per write).
  finish_write(uv_try_write(as_stream(&tcp_), bufs.data(), static_cast<unsigned>(bufs.size())));
}

void StreamSocket::on_ring_write(int result) {
  ring_queued_ = false;
  if (closing_) return;
  if (tls_) return finish_tls_ring_write(result);
  finish_write(result);
}

void StreamSocket::finish_write(int result) {
  if (result < 0 && result != UV_EAGAIN) {
    close(std::string("write failed: ") + uv_strerror(result));
    return;
  }
  size_t done = result > 0 ? static_cast<size_t>(result) : 0;
  if (done == batch_.bytes()) {
    write_done(false);
    return;
  }
  // The rest waits in libuv's queue; the callback flushes again if anything is left.
  auto rest = batch_.unwritten(done);
  batch_.req.data = this;
  int rc =
      uv_write(&batch_.req, as_stream(&tcp_), rest.data(), static_cast<unsigned>(rest.size()), &StreamSocket::on_write);
  if (rc != 0) {
    close(std::string("write failed: ") + uv_strerror(rc));
    return;
  }
  writing_ = true;
}

void StreamSocket::on_write(uv_write_t* req, int status) {
  auto* self = owner_of<StreamSocket>(req);
  self->writing_ = false;
  self->batch_.clear();
  if (status < 0) {
    if (status != UV_ECANCELED) self->close(std::string("write error: ") + uv_strerror(status));
    return;
  }
  if (self->closing_) return;
  self->write_done(true);
}

void StreamSocket::write_done(bool async) {
  batch_.clear();
  last_write_ms_ = loop_.now_ms();
  if (async) {
    // Whatever queued up while this batch was in flight goes out now, as the next batch, unless
    // it is live media being held for a larger write (the hold timer flushes it).
    if (!in_delayed_list) flush();
  } else if (more_to_flush_) {
    request_flush();
  }
  if (!closing_) on_written(async);
}

// ---------------------------------------------------------------------------------------------
// Closing and lifetime.

void StreamSocket::schedule_close(std::string reason) {
  if (closing_soon()) return;
  pending_close_reason = std::move(reason);
  loop_.flush().flush_soon(this);
}

void StreamSocket::close(const std::string& reason) {
  if (closing_) return;
  if (ring_queued_) {
    // A batch queued on the ring goes out (or fails) while the socket is still open.
    loop_.flush().submit_now();
    if (closing_) return;
  }
  closing_ = true;
  loop_.flush().cancel(this);
  if (handshake_deferred_) loop_.handshakes().forget(this);
  on_close(reason);
  stop_reading();
  if (tcp_initialized_) {
    uv_close(as_handle(&tcp_), &StreamSocket::on_handle_closed);
  } else {
    handle_closed_ = true;
    maybe_delete();
  }
}

void StreamSocket::on_handle_closed(uv_handle_t* handle) {
  auto* self = owner_of<StreamSocket>(handle);
  self->handle_closed_ = true;
  self->maybe_delete();
}

void StreamSocket::release() {
  --retained_;
  maybe_delete();
}

void StreamSocket::maybe_delete() {
  if (handle_closed_ && retained_ == 0) delete this;
}

}  // namespace sluice::server
