// SessionPeer: a client connection as the rest of the server knows it, whatever carries it (a TCP
// StreamSocket for RTMP and HTTP, an SRT socket): the id and address its log lines name, and the
// bytes it moved, which the done hooks report. The stream registry holds a publisher by this
// identity (server/live/stream_registry.hpp), so that a takeover works across protocols.
#pragma once

#include <cstdint>
#include <string>

namespace sluice::server {

class SessionPeer {
 public:
  virtual uint64_t id() const = 0;
  virtual const std::string& peer() const = 0;
  virtual uint64_t bytes_in() const = 0;
  virtual uint64_t bytes_out() const = 0;
  // Over TLS (RTMPS): the access log says so (server/access_log/).
  virtual bool over_tls() const { return false; }
  // Ends the session (reload.recheck found its admission no longer holds), after this callback.
  virtual void end_session(std::string reason) = 0;

 protected:
  ~SessionPeer() = default;
};

}  // namespace sluice::server
