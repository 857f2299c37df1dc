// HandshakeGate: at most `per_iteration` handshake reads (an RTMP C0C1/C2, a TLS ClientHello and
// what follows it) per loop iteration (docs/configuration.md, rtmp.limits.accepts_per_iteration).
// Accepts are bounded per iteration already, but a peer can open thousands of connections first
// and start all their handshakes at once: each costs a digest or a key exchange, and a thousand in
// one iteration would hold the players of the loop. A socket refused a read leaves its bytes in
// the kernel (libuv's empty read buffer: UV_ENOBUFS), stops reading and waits in a queue; each
// iteration resumes the oldest waiting ones, which then compete with new handshakes for the
// iteration's reads. Established connections are never held back.
#pragma once

#include <uv.h>

#include <cstdint>
#include <deque>

namespace sluice::server {

class StreamSocket;

class HandshakeGate {
 public:
  HandshakeGate() = default;
  HandshakeGate(const HandshakeGate&) = delete;
  HandshakeGate& operator=(const HandshakeGate&) = delete;

  void start(uv_loop_t* loop, uint32_t per_iteration);
  void set_per_iteration(uint32_t n) { per_iteration_ = n == 0 ? 1 : n; }
  void close_handles();

  // One handshake read now: true while this iteration has reads left.
  bool admit();
  // `s` was refused a read and stopped reading: resumed in a later iteration.
  void defer(StreamSocket* s);
  // `s` is going away: it must not be resumed.
  void forget(StreamSocket* s);

  uint64_t deferred_total() const { return deferred_total_; }
  size_t waiting() const { return waiting_.size(); }

 private:
  static void on_prepare(uv_prepare_t* prepare);

  uv_prepare_t prepare_{};
  bool started_ = false;
  uint32_t per_iteration_ = 32;
  uint32_t left_ = 32;
  std::deque<StreamSocket*> waiting_;
  uint64_t deferred_total_ = 0;
};

}  // namespace sluice::server
