// PlayerOutput: what a live player's subscriber (server/live/live_subscriber.hpp) asks of the
// connection it writes to (a SessionPeer: names for its log lines), whether the connection is going, the bytes it
// has taken and not yet sent, a flush at once or held, a close after this loop iteration. A TCP
// StreamSocket is one (RTMP players, HTTP-FLV readers, push relays); an SRT connection, which has
// no descriptor libuv writes to, will be another (docs/srt.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "server/io/session_peer.hpp"

namespace sluice::server {

class PlayerOutput : public SessionPeer {
 public:
  // Closed, or about to be.
  virtual bool closing_soon() const = 0;
  // Bytes the connection took and has not sent yet: the transport's part of a player's backlog.
  virtual size_t write_queue_bytes() const = 0;
  virtual void schedule_close(std::string reason) = 0;
  void end_session(std::string reason) final { schedule_close(std::move(reason)); }
  virtual void request_flush() = 0;
  virtual void request_held_flush() = 0;

 protected:
  ~PlayerOutput() = default;
};

}  // namespace sluice::server
