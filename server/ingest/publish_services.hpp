// What a publisher of any protocol reaches beyond its connection (docs/architecture.md, "Adding a
// protocol"): the loop, its stream registry and access gate, and what a publish starts on that
// loop (push relays, HLS, the cluster's claim). The composition root owns one per worker loop; it
// outlives every connection. Its pointers are null where the part is not built (no cluster).
#pragma once

#include <string>

#include "server/access/gate.hpp"
#include "server/access/hook_messages.hpp"
#include "server/io/loop_context.hpp"
#include "server/io/session_peer.hpp"
#include "server/live/stream_registry.hpp"

namespace sluice::server {

class RelayManager;
class HlsService;
namespace cluster {
class ClusterService;
}

struct PublishServices {
  LoopContext& loop;
  StreamRegistry& registry;
  AccessGate& gate;
  RelayManager* relays = nullptr;
  HlsService* hls = nullptr;
  cluster::ClusterService* cluster = nullptr;
};

// What a LivePublisher (server/ingest/live_publisher.hpp) asks of the connection that owns it.
class PublisherHost {
 public:
  // The connection as the registry and the done hooks know it.
  virtual const SessionPeer& publishing_peer() const = 0;
  virtual PublishServices& publish_services() = 0;
  // Who the connection is, for hooks about one of its streams (client, address, app, protocol...).
  virtual HookEvent hook_base_event(const std::string& stream) const = 0;
  // A takeover replaced the publisher of `stream_id` (the protocol's own number for it; 0 when a
  // connection publishes one stream): destroy it, tell the peer why, and close unless the same
  // connection is the taker.
  virtual void end_replaced_publisher(uint32_t stream_id, const std::string& why, bool same_connection) = 0;
  // A player of the stream asks for a keyframe (server/live/stream_registry.hpp, PublisherSeat):
  // only a connection that can ask its encoder for one (WHIP's PLI) does anything.
  virtual void request_keyframe() {}

 protected:
  ~PublisherHost() = default;
};

}  // namespace sluice::server
