// Taking a live name for a publisher, the same steps for every ingest protocol once the access
// gate admitted it (docs/live.md, "A second publisher"; docs/cluster.md, "Ownership"):
//
//  1. The name the gate gives (a hook may rename) must be a valid stream name.
//  2. On a cluster node, the name is claimed in the registry first (another node's claim is taken
//     when the app's publish_conflict is takeover and cluster.duplicate_publish allows it).
//  3. The name is claimed on this loop (StreamRegistry::claim_publisher). Taken: the app's
//     publish_conflict asks its publisher to give it up (server/live/takeover.hpp), then the name
//     is claimed once more with the handover; taken still is a refusal.
//
// Steps 2 and 3 may answer later (Redis, another loop): the protocol waits as for a hook. `wanted`
// says whether the connection still wants the name when an answer comes (a closed one does not:
// nothing is claimed for it, and a cluster claim won for it is given back).
// start_publisher() then makes the LivePublisher with what a publish starts (recording, relays).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "config/config.hpp"
#include "server/access/access_ticket.hpp"
#include "server/ingest/live_publisher.hpp"
#include "server/ingest/publish_services.hpp"
#include "server/live/stream_registry.hpp"

namespace sluice::server {

enum class PublishRefusal : uint8_t {
  None,
  BadName,    // the hook renamed the stream to an invalid name (detail: the problem)
  OtherNode,  // another node of the cluster publishes it (detail: that node's id)
  Full,       // rtmp.limits.max_streams
  Taken,      // published here and kept (publish_conflict: reject, or the takeover failed)
};

struct PublishClaim {
  PublishRefusal refusal = PublishRefusal::None;
  std::string detail;
  std::string key;  // "app/name"
  Handover handover;
  bool granted() const { return refusal == PublishRefusal::None; }
};

// `name`: the gate's (AccessOutcome::name). `done` runs once, maybe inside the call.
void claim_publish(PublishServices& services, const config::AppConfig& app, const SessionPeer& who,
                   const std::string& name, std::function<bool()> wanted, std::function<void(PublishClaim)> done);

// The client-facing words of a refusal ("Stream 'cam' is already publishing."), the same for
// every protocol that can show a text.
std::string publish_refusal_text(const config::AppConfig& app, const std::string& name, const PublishClaim& c);

// The publisher of a granted claim: its ticket, the app's recording (record.mode all) and its
// push targets (the app's and the hook's `push`).
std::unique_ptr<LivePublisher> start_publisher(PublisherHost& host, const config::AppConfig& app, uint32_t stream_id,
                                               const std::string& name, const PublishClaim& claim, AccessTicket ticket,
                                               const std::vector<std::pair<std::string, std::string>>& push);

}  // namespace sluice::server
