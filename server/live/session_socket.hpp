// SessionSocket: a StreamSocket that speaks RTMP through a protocol::Session, the part every RTMP
// connection shares whichever side it is on: an accepted client (server/rtmp/connection.hpp) or
// the server's own outgoing relay connection (server/relay/relay_client.hpp).
//
// It feeds the received bytes to the session and hands the subclass each event in order (none
// once the socket is closing), asks for a flush when the session has replies to send, puts the
// session's output first in every batch it is asked for, and gives back to the session what a
// write left unwritten. What to do with an event, the timeouts and what else goes into a batch
// are the subclass's.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "protocol/session.hpp"
#include "server/io/stream_socket.hpp"

namespace sluice::server {

class WriteBatch;

class SessionSocket : public StreamSocket {
 public:
  protocol::Session& session() { return session_; }
  // Moves the session's pending output (replies, control messages) into the batch, behind what
  // the batch holds: before any media chunked after it, as the chunk writer's state requires.
  void append_control_output(WriteBatch& batch);

 protected:
  SessionSocket(LoopContext& loop, uint64_t id, const protocol::SessionOptions& options);
  ~SessionSocket() override;

  // One event the peer's bytes made.
  virtual void on_session_event(protocol::SessionEvent& event) = 0;
  // The bytes broke the protocol (after the events before the fault were handled): log, close.
  // `bytes` is what this read brought.
  virtual void on_protocol_error(const std::string& message, std::span<const uint8_t> bytes) {
    (void)bytes;
    close("protocol error: " + message);
  }
  // After every read whose bytes parsed, before the flush is asked for: the subclass's limits.
  virtual void after_events() {}

  // When the peer last sent something (the loop's clock); the subclass may move it (a connection
  // waiting for a hook is not idle) and sets it when its own clock starts (a connect under way).
  uint64_t last_receive_ms_ = 0;
  protocol::Session session_;

 private:
  void on_bytes(std::span<const uint8_t> bytes) final;
  void keep_unwritten(std::span<const uint8_t> rest) final { session_.queue_raw_output(rest); }
  // The RTMP handshake too (C0C1, then C2), besides a TLS one.
  bool handshake_pending() const final { return StreamSocket::handshake_pending() || !session_.handshake_done(); }
  bool has_pending_output() const final { return session_.has_output(); }

  std::vector<protocol::SessionEvent> events_;  // reused by every read
};

}  // namespace sluice::server
