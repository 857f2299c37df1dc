#include "server/live/takeover.hpp"

#include <memory>

#include "server/io/guard_counters.hpp"

namespace sluice::server {

void take_over(StreamRegistry& registry, const config::AppConfig& app, const std::string& key, const SessionPeer* taker,
               const std::string& who, std::function<void(const TakeoverAnswer&)> done) {
  const bool reject = app.publish_conflict == config::PublishConflict::Reject;
  const uint64_t stale_ms = reject ? static_cast<uint64_t>(app.publish_stale_after.count()) : 0;
  const GuardEvent counted = reject ? GuardEvent::PublishStaleReplaced : GuardEvent::PublishTakeover;
  const std::string why = std::string(reject ? "stale, " : "") + "replaced by a new publisher (" + who + ")";
  TakeoverAnswer answer;
  switch (registry.evict(key, stale_ms, why, taker, answer.handover)) {
    case StreamRegistry::Eviction::Freed:
    case StreamRegistry::Eviction::Kept:
      if (answer.handover.takeovers != 0) GuardCounters::bump(counted);
      return done(answer);
    case StreamRegistry::Eviction::Elsewhere: break;
  }
  registry.evict_elsewhere(key, stale_ms, [done = std::move(done), counted](bool freed, const Handover& h) {
    TakeoverAnswer answer;
    if (freed && h.takeovers != 0) {
      GuardCounters::bump(counted);
      answer.from_other_loop = true;
      answer.handover = h;
    }
    done(answer);
  });
}

}  // namespace sluice::server
