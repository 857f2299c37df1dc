// RelayLink: one outgoing connection of a relay, a push target's or a pull's, whatever protocol it
// speaks: RelayClient for rtmp:// and rtmps://, the SRT wing's link for srt:// (docs/relays.md,
// "SRT targets and upstreams"). It owns nothing that outlives it: its Owner (a PushTarget or a
// Pull) keeps the state across reconnections and is told once when the connection ends, with why.
//
// Push: once the target accepted the publish, a subscriber of the local hub (the same queue and
// slow-player policy as players) sends the stream from the GOP cache's keyframe. Pull: the
// upstream's frames go to the owner as messages (an FLV tag's type, timestamp and body).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "config/config.hpp"
#include "protocol/message.hpp"
#include "server/io/session_peer.hpp"
#include "server/io/tls_context.hpp"
#include "server/relay/relay_url.hpp"

namespace sluice::media {
class StreamHub;
}

namespace sluice::server {

class StreamRegistry;

class RelayLink {
 public:
  enum class Role : uint8_t { Push, Pull };

  class Owner {
   public:
    virtual ~Owner() = default;
    // Push: the target accepted the publish. Pull: the upstream started playing (again).
    virtual void relay_live(RelayLink& c) = 0;
    // Pull: one media message from the upstream.
    virtual void relay_media(RelayLink& c, protocol::Message& m) {
      (void)c;
      (void)m;
    }
    // Pull: the upstream's publisher left (its players wait for the next one).
    virtual void relay_source_end(RelayLink& c) { (void)c; }
    // detach() handed the connection to this owner until it closes.
    virtual void relay_adopted(RelayLink& c) { (void)c; }
    // The connection is closing (called once, from its close); the owner forgets the pointer.
    virtual void relay_closed(RelayLink& c, const std::string& reason) = 0;
  };

  struct Settings {
    Role role = Role::Push;
    RelayUrl url;
    std::string stream_name;                // published or played there (for srt://, the stream id)
    std::shared_ptr<const TlsContext> tls;  // for rtmps:// (a client context)
    // Push: the local stream.
    StreamRegistry* registry = nullptr;
    std::string source_key;
    media::StreamHub* hub = nullptr;
    std::optional<config::PlayerQueueConfig> queue;  // a copy: a reload may come before the link is up
    uint64_t setup_timeout_ms = 10'000;              // connect to publish/play start
    uint64_t idle_timeout_ms = 10'000;               // pull: nothing received this long while media flowed (x3 before)
  };

  // Resolves the host and connects; failures close the connection (the owner is told).
  virtual void start() = 0;
  // The owner is going: the connection closes (a push sends its end first, reporting to `drain`,
  // which then owns it, meanwhile).
  virtual void detach(const std::string& why, Owner* drain) = 0;
  virtual void on_tick(uint64_t now_ms) = 0;
  virtual void close_link(const std::string& reason) = 0;
  // The connection as the stream registry knows a publisher (a pull claims the name for it), and
  // its byte counts.
  virtual const SessionPeer& link_peer() const = 0;

 protected:
  ~RelayLink() = default;
};

// Makes the link for srt:// URLs (the SRT wing's, given by the composition root): null when SRT is
// not built into this loop.
using SrtLinkFactory = std::function<RelayLink*(uint64_t id, RelayLink::Settings settings, RelayLink::Owner* owner)>;

}  // namespace sluice::server
