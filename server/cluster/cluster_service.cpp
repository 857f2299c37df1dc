#include "server/cluster/cluster_service.hpp"

#include <nlohmann/json.hpp>

#include "server/io/logging.hpp"
#include "server/io/uv_handle.hpp"
#include "server/io/wall_clock.hpp"

namespace sluice::server::cluster {

namespace {

// How often due refreshes are looked for: a small fraction of the shortest lease (2 s).
constexpr uint64_t kTickMs = 200;

// This run of the node: the same for every loop (so that they recognise each other's claims),
// different after a restart (so that a restarted node does not take its old claims for its own).
uint64_t node_epoch() {
  static const uint64_t epoch = static_cast<uint64_t>(wall_clock_ms());
  return epoch;
}

// Every live node and every claimed stream in one round trip. KEYS is fine here: the registry's
// database holds only the cluster's keys (a few per node and stream). Nodes whose record expired
// leave the set.
constexpr const char* kViewScript =
    "local out = {} "
    "for _, id in ipairs(redis.call('SMEMBERS', KEYS[1])) do "
    "  local v = redis.call('GET', 'sluice:node:' .. id) "
    "  if v then table.insert(out, 'node') table.insert(out, id) table.insert(out, v) "
    "  else redis.call('SREM', KEYS[1], id) end "
    "end "
    "for _, k in ipairs(redis.call('KEYS', 'sluice:stream:*')) do "
    "  local v = redis.call('GET', k) "
    "  if v then table.insert(out, 'stream') table.insert(out, string.sub(k, 15)) table.insert(out, v) end "
    "end "
    "return out";

// The owner of KEYS[1] and that node's record in one round trip: {claim, record}, the record ""
// when the owner's has expired (it died); nil when nobody owns the stream.
constexpr const char* kLocateScript =
    "local v = redis.call('GET', KEYS[1]) "
    "if not v then return nil end "
    "local owner = string.match(v, '^(%S+)') or '' "
    "return {v, redis.call('GET', 'sluice:node:' .. owner) or ''}";

// Where a node that took a stream from another one publishes its name, so that the old owner
// checks its claim at once instead of at its next refresh (a third of a lease later).
constexpr const char* kTakenChannel = "sluice:taken";

// The rtmp:// address in a node's record ({"advertise": {"rtmp": ...}}); empty when absent.
std::string advertised_rtmp(const std::string& record) {
  nlohmann::json j = nlohmann::json::parse(record, nullptr, false);
  if (!j.is_object()) return {};
  auto a = j.find("advertise");
  if (a == j.end() || !a->is_object()) return {};
  auto r = a->find("rtmp");
  return r != a->end() && r->is_string() ? r->get<std::string>() : std::string();
}

}  // namespace

ClusterService::ClusterService(uv_loop_t* loop, const config::ClusterConfig& config, uint32_t worker)
    : loop_(loop),
      config_(config),
      who_("worker=" + std::to_string(worker)),
      book_(config.node_id, node_epoch(), config.lease),
      client_(loop, config, who_),
      listener_(loop, config, who_ + " channel=" + kTakenChannel) {}

ClusterService::~ClusterService() { stop(); }

void ClusterService::start(OnLost on_lost) {
  on_lost_ = std::move(on_lost);
  uv_timer_init(loop_, &timer_);
  timer_.data = this;
  uv_timer_start(
      &timer_, [](uv_timer_t* t) { static_cast<ClusterService*>(t->data)->tick(); }, kTickMs, kTickMs);
  started_ = true;
  client_.start([this](bool up) {
    if (up) book_.refresh_all_soon();
  });
  listener_.listen(kTakenChannel, [this](const std::string& stream) { on_taken(stream); });
  listener_.start(nullptr);
}

void ClusterService::stop() {
  if (stopped_ || !started_) return;
  stopped_ = true;
  // Best effort: a node that stops frees its streams at once instead of after a lease.
  for (const std::string& stream : book_.owned()) {
    if (auto cmd = book_.release(stream)) client_.send(*cmd, nullptr);
  }
  client_.stop();
  listener_.stop();
  close_handle(&timer_);
}

void ClusterService::claim(const std::string& stream, bool take, std::function<void(ClaimOutcome)> done) {
  client_.send(book_.claim(stream), [this, stream, take, done = std::move(done)](std::optional<RegistryReply> r) {
    if (stopped_) return done({ClaimResult::Unreachable, {}, {}});
    if (!r || r->type == RegistryReply::Type::Error) {
      // Availability first: the stream goes on; its claim is written (or found lost) when Redis answers.
      SLUICE_LOG_WARN("{} proto=cluster event=claim_unconfirmed stream={} reason=\"{}\"", who_, stream,
                      r ? r->str : "the registry is unreachable");
      book_.assume(stream);
      return done({ClaimResult::Owned, {}, {}});
    }
    if (r->type == RegistryReply::Type::Status && r->str == "OK") {
      book_.on_claim_reply(stream, r->str, now_ms());
      return done({ClaimResult::Owned, {}, {}});
    }
    // Taken: by another loop of this node (the same value) or by another node.
    client_.send({{"GET", LeaseBook::key_of(stream)}}, [this, stream, take, done](std::optional<RegistryReply> g) {
      if (g && g->type == RegistryReply::Type::String && g->str == book_.value())
        return done({ClaimResult::Owned, {}, {}});
      // Another node's (or an earlier run of this one's, which is nobody's now).
      if (g && g->type == RegistryReply::Type::String && (take || LeaseBook::is_draining_value(g->str))) {
        return take_over(stream, g->str, done);
      }
      if (g && g->type == RegistryReply::Type::String)
        return done({ClaimResult::OwnedByOther, LeaseBook::owner_of(g->str), {}});
      // Gone meanwhile (its owner released it): one more try is the caller's.
      done({ClaimResult::OwnedByOther, "unknown", {}});
    });
  });
}

// The owner drains (its publisher was asked to reconnect and has come here, docs/cluster.md,
// "Draining") or is replaced (publish_conflict: takeover): the stream moves now, and the owner is
// told on the channel, so that it ends its publisher within a round trip or two.
void ClusterService::take_over(const std::string& stream, const std::string& seen,
                               std::function<void(ClaimOutcome)> done) {
  client_.send(book_.take_over(stream, seen), [this, stream, seen, done](std::optional<RegistryReply> r) {
    const std::string from = LeaseBook::owner_of(seen);
    if (stopped_ || !r || r->type != RegistryReply::Type::Integer || r->integer != 1) {
      return done({ClaimResult::OwnedByOther, from, {}});
    }
    book_.on_claim_reply(stream, std::string("OK"), now_ms());
    client_.send({{"PUBLISH", kTakenChannel, stream}}, nullptr);
    SLUICE_LOG_INFO("{} proto=cluster event=claim_handover stream={} from={}{}", who_, stream, from,
                    LeaseBook::is_draining_value(seen) ? " draining=1" : "");
    done({ClaimResult::Owned, {}, from});
  });
}

void ClusterService::on_taken(const std::string& stream) {
  if (stopped_) return;
  if (auto cmd = book_.refresh_now(stream)) send_refresh(stream, *cmd);
}

void ClusterService::drain() {
  std::vector<RegistryCommand> marks = book_.start_draining();
  for (const RegistryCommand& cmd : marks) client_.send(cmd, nullptr);
  SLUICE_LOG_INFO("{} proto=cluster event=claims_draining streams={}", who_, marks.size());
}

void ClusterService::release(const std::string& stream) {
  if (auto cmd = book_.release(stream)) client_.send(*cmd, nullptr);
}

void ClusterService::hand_over(const std::string& stream) { book_.release(stream); }

void ClusterService::adopt(const std::string& stream) { book_.assume(stream); }

void ClusterService::locate(const std::string& stream, std::function<void(StreamLocation)> done) {
  client_.send({{"EVAL", kLocateScript, "1", LeaseBook::key_of(stream)}},
               [this, done = std::move(done)](std::optional<RegistryReply> r) {
                 StreamLocation where;
                 if (!r || r->type == RegistryReply::Type::Error) {
                   where.kind = StreamLocation::Kind::Unreachable;
                 } else if (r->type == RegistryReply::Type::Array && r->elements.size() == 2) {
                   where.owner = LeaseBook::owner_of(r->elements[0].str);
                   if (r->elements[0].str == book_.value()) {
                     where.kind = StreamLocation::Kind::Here;
                   } else if (where.owner != config_.node_id) {
                     // An earlier run of this node is nobody: its publisher is gone with it.
                     where.rtmp = advertised_rtmp(r->elements[1].str);
                     if (!where.rtmp.empty()) where.kind = StreamLocation::Kind::Remote;
                   }
                 }
                 done(std::move(where));
               });
}

void ClusterService::keep_node_record(std::function<std::string()> record) { record_ = std::move(record); }

void ClusterService::write_record() {
  const std::string key = "sluice:node:" + config_.node_id;
  client_.send({{"SET", key, record_(), "PX", std::to_string(3 * config_.lease.count())}}, nullptr);
  client_.send({{"SADD", "sluice:nodes", config_.node_id}}, nullptr);
}

void ClusterService::read_view() {
  view_in_flight_ = true;
  client_.send({{"EVAL", kViewScript, "1", "sluice:nodes"}}, [this](std::optional<RegistryReply> r) {
    view_in_flight_ = false;
    if (!r || r->type != RegistryReply::Type::Array) return;
    ClusterView v;
    for (size_t i = 0; i + 2 < r->elements.size(); i += 3) {
      const std::string& kind = r->elements[i].str;
      if (kind == "node") v.nodes.push_back({r->elements[i + 1].str, r->elements[i + 2].str});
      if (kind == "stream") v.streams.push_back({r->elements[i + 1].str, LeaseBook::owner_of(r->elements[i + 2].str)});
    }
    v.read_at_ms = wall_clock_ms();
    view_ = std::move(v);
  });
}

void ClusterService::tick() {
  if (!client_.connected()) return;
  if (record_ && now_ms() >= next_record_ms_) {
    next_record_ms_ = now_ms() + config_.lease.count() / 3;
    write_record();
    if (!view_in_flight_) read_view();
  }
  for (auto& [stream, cmd] : book_.due_refreshes(now_ms())) send_refresh(stream, cmd);
}

void ClusterService::send_refresh(const std::string& stream, const RegistryCommand& command) {
  client_.send(command, [this, stream](std::optional<RegistryReply> r) {
    std::optional<int64_t> v;
    if (r && r->type == RegistryReply::Type::Integer) v = r->integer;
    if (!book_.on_refresh_reply(stream, v, now_ms())) return;
    if (book_.draining()) {
      // The expected end of a drain: the publisher reconnected to another node, which took it.
      SLUICE_LOG_INFO("{} proto=cluster event=stream_handed_over stream={}", who_, stream);
      if (on_lost_) on_lost_(stream, "handed over to another node (draining)");
      return;
    }
    // A publisher on another node replaced this one (or, after a partition, claimed the name).
    SLUICE_LOG_WARN("{} proto=cluster event=stream_lost stream={} reason=\"another node owns it now\"", who_, stream);
    if (on_lost_) on_lost_(stream, "taken by a new publisher on another node");
  });
}

}  // namespace sluice::server::cluster
