// Taking a live name over (docs/live.md, "A second publisher of the same name"), the same for every
// ingest protocol: a publish of a name that is already published goes through the app's
// publish_conflict. takeover: the name's publisher gives it up at once; reject: only when it has
// been quiet for publish_stale_after. The publisher that gives up ends its publication quietly, so
// that the taker's continues it for the players (Publication's continue_after).
//
// The protocol calls take_over() when its claim came back Taken, and claims again when the answer
// comes, with the handover, once: a name still taken then is a refusal. The answer comes before
// take_over() returns when the name's publisher is on this loop (or gone), or later on this loop
// when another loop publishes it (asked through the worker mesh): a protocol waits for it as for a
// hook's answer. Takeovers are counted in the guard counters (/metrics).
#pragma once

#include <functional>
#include <string>

#include "config/config.hpp"
#include "server/live/stream_registry.hpp"

namespace sluice::server {

class SessionPeer;

struct TakeoverAnswer {
  bool from_other_loop = false;  // the publisher replaced was on another loop of this node
  Handover handover;             // takeovers == 0: nobody was replaced (the claim is refused if still taken)
};

// `taker`: the new publisher's connection; `who`: how the log and the replaced client name it
// ("conn 12 from 10.0.0.7:51234").
void take_over(StreamRegistry& registry, const config::AppConfig& app, const std::string& key, const SessionPeer* taker,
               const std::string& who, std::function<void(const TakeoverAnswer&)> done);

}  // namespace sluice::server
