#include "server/ingest/publish_claim.hpp"

#include "server/cluster/cluster_service.hpp"
#include "server/io/guard_counters.hpp"
#include "server/io/logging.hpp"
#include "server/live/takeover.hpp"

namespace sluice::server {

namespace {

struct ClaimRun {
  PublishServices& services;
  const config::AppConfig& app;
  const SessionPeer& who;
  std::string key;
  std::function<bool()> wanted;
  std::function<void(PublishClaim)> done;
};

void refuse(ClaimRun& run, PublishRefusal why, std::string detail = {}) {
  PublishClaim c;
  c.refusal = why;
  c.detail = std::move(detail);
  c.key = run.key;
  run.done(std::move(c));
}

// Step 3; `takeover` once the name's publisher was asked to give it up.
void claim_here(const std::shared_ptr<ClaimRun>& run, std::optional<TakeoverAnswer> takeover) {
  StreamRegistry& registry = run->services.registry;
  cluster::ClusterService* cluster = run->services.cluster;
  const StreamRegistry::Claim claim = registry.claim_publisher(run->key, &run->who, hub_options(run->app));
  // A publication that ended quietly for this publisher must end for its players after all.
  const bool abandoned = takeover && takeover->handover.continue_after;
  if (claim == StreamRegistry::Claim::Full) {
    if (abandoned) registry.end_abandoned_publication(run->key);
    if (cluster != nullptr) cluster->release(run->key);
    return refuse(*run, PublishRefusal::Full);
  }
  if (claim == StreamRegistry::Claim::Taken) {
    if (takeover) {
      if (abandoned) registry.end_abandoned_publication(run->key);
      GuardCounters::bump(GuardEvent::PublishConflictRefused);
      return refuse(*run, PublishRefusal::Taken);
    }
    // The answer comes at once, or later when another loop publishes the name.
    const std::string who = "conn " + std::to_string(run->who.id()) + " from " + run->who.peer();
    return take_over(registry, run->app, run->key, &run->who, who, [run](const TakeoverAnswer& a) {
      if (run->wanted()) return claim_here(run, a);
      // The taker went meanwhile: a publication that ended quietly for it ends for its players.
      if (a.handover.continue_after) run->services.registry.end_abandoned_publication(run->key);
    });
  }
  PublishClaim c;
  c.key = run->key;
  if (takeover) c.handover = takeover->handover;
  if (takeover && takeover->from_other_loop && cluster != nullptr) cluster->adopt(run->key);
  if (c.handover.takeovers != 0) registry.set_takeovers(run->key, c.handover.takeovers);
  run->done(std::move(c));
}

}  // namespace

void claim_publish(PublishServices& services, const config::AppConfig& app, const SessionPeer& who,
                   const std::string& name, std::function<bool()> wanted, std::function<void(PublishClaim)> done) {
  auto run = std::make_shared<ClaimRun>(
      ClaimRun{services, app, who, app.name + "/" + name, std::move(wanted), std::move(done)});
  if (std::string_view problem = stream_name_problem(name); !problem.empty()) {  // a hook's rename
    GuardCounters::bump(GuardEvent::BadStreamName);
    return refuse(*run, PublishRefusal::BadName, std::string(problem));
  }
  cluster::ClusterService* cluster = services.cluster;
  if (cluster == nullptr) return claim_here(run, std::nullopt);
  const bool take = app.publish_conflict == config::PublishConflict::Takeover &&
                    services.loop.config().cluster.duplicate_publish == config::DuplicatePublish::Takeover;
  cluster->claim(run->key, take, [run, cluster](cluster::ClaimOutcome c) {
    const bool owned = c.result == cluster::ClaimResult::Owned;
    if (!run->wanted()) {
      // A claim won for a connection that went meanwhile is given back at once.
      if (owned) cluster->release(run->key);
      return;
    }
    if (!c.taken_from.empty()) {
      SLUICE_LOG_INFO("conn={} peer={} event=publish_takeover stream={} from_node={}", run->who.id(), run->who.peer(),
                      run->key, c.taken_from);
    }
    if (!owned) return refuse(*run, PublishRefusal::OtherNode, c.owner);
    claim_here(run, std::nullopt);
  });
}

std::string publish_refusal_text(const config::AppConfig& app, const std::string& name, const PublishClaim& c) {
  switch (c.refusal) {
    case PublishRefusal::None: return {};
    case PublishRefusal::BadName: return "Invalid stream name from the on_publish hook.";
    case PublishRefusal::OtherNode: return "Stream '" + name + "' is already publishing on another node.";
    case PublishRefusal::Full: return "The server holds its maximum of streams (rtmp.limits.max_streams).";
    case PublishRefusal::Taken: break;
  }
  const bool reject = app.publish_conflict == config::PublishConflict::Reject;
  return "Stream '" + name + "' is already publishing" +
         (reject ? " (publish_conflict: reject; it is replaced once it sends nothing for " +
                       std::to_string(app.publish_stale_after.count()) + " ms)"
                 : "") +
         ".";
}

std::unique_ptr<LivePublisher> start_publisher(PublisherHost& host, const config::AppConfig& app, uint32_t stream_id,
                                               const std::string& name, const PublishClaim& claim, AccessTicket ticket,
                                               const std::vector<std::pair<std::string, std::string>>& push) {
  auto p =
      std::make_unique<LivePublisher>(host, stream_id, claim.key, name,
                                      static_cast<uint32_t>(app.timestamp_jump.count()), claim.handover.continue_after);
  p->ticket = std::move(ticket);
  if (app.record.mode == config::RecordMode::All) p->start_recording(app);
  p->start_relays(app, push);
  return p;
}

}  // namespace sluice::server
