#include "server/access/gate.hpp"

#include <unistd.h>

#include <chrono>

#include "server/access/token.hpp"
#include "server/io/guard_counters.hpp"

namespace sluice::server {

int64_t unix_now() {
  using namespace std::chrono;
  return duration_cast<seconds>(system_clock::now().time_since_epoch()).count();
}

namespace {

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof(buf) - 1) != 0) return "sluice";
  return buf;
}

GuardEvent counter_of(Denial d) {
  switch (d) {
    case Denial::Address: return GuardEvent::AccessAddress;
    case Denial::Signature: return GuardEvent::AccessSignature;
    default: return GuardEvent::AccessKey;
  }
}

// The app's limits, last: a refused client holds no seat, an admitted one holds it until done.
void take_seat(AccessAction action, const config::AppConfig& app, AccessOutcome& outcome) {
  std::string why;
  AudienceRole role = action == AccessAction::Publish ? AudienceRole::Publisher : AudienceRole::Player;
  if (!outcome.seat.take(role, app.name, outcome.name, app.limits, why)) {
    GuardCounters::bump(role == AudienceRole::Publisher ? GuardEvent::AppPublishers : GuardEvent::AppPlayers);
    outcome.refused_by = RefusedBy::Limit;
    outcome.reason = "limit reached (" + why + ")";
  }
}

// The hook's verdict into the outcome; false when it refuses.
bool apply_verdict(const HookVerdict& v, AccessOutcome& outcome) {
  if (v.failed) GuardCounters::bump(GuardEvent::HookFailed);
  if (!v.allowed) {
    GuardCounters::bump(GuardEvent::HookDenied);
    outcome.refused_by = RefusedBy::Hook;
    outcome.reason = v.reason;
    return false;
  }
  if (!v.name.empty()) outcome.name = v.name;
  outcome.lifetime_s = v.lifetime_s;
  outcome.push = v.push;
  return true;
}

}  // namespace

AccessGate::AccessGate(const LoopContext& loop) : loop_(loop), hooks_(loop.loop()), host_name_(host_name()) {}

HookRequest AccessGate::request_for(const std::string& url, HookEvent& event) {
  const std::string& id = config().server_id;
  event.server_id = id.empty() ? host_name_ : id;
  return HookRequest{url, hook_body(event), config().hooks.timeout};
}

bool AccessGate::is_cluster_pull(std::string_view query) const {
  const std::string& token = config().cluster.token.value;
  return config().cluster.enabled() && !token.empty() && query_token_matches(query, config::kClusterTokenParam, token);
}

uint64_t AccessGate::admit(AccessAction action, const config::AppConfig& app, std::span<const uint8_t> peer,
                           HookEvent event, AccessDone done) {
  const config::AccessRules& rules = action == AccessAction::Publish ? app.publish : app.play;
  AccessOutcome outcome;
  outcome.name = event.stream;
  if (action == AccessAction::Play && is_cluster_pull(event.query)) {
    done(std::move(outcome));  // another node of the cluster: its players passed its own gate
    return 0;
  }
  AccessVerdict v = check_access(rules, action, app.name, event.stream, event.query, peer, unix_now());
  if (!v.allowed()) {
    GuardCounters::bump(counter_of(v.denial));
    outcome.refused_by = RefusedBy::Rules;
    outcome.denial = v.denial;
    outcome.reason = std::move(v.reason);
    done(std::move(outcome));
    return 0;
  }
  const std::string& url = action == AccessAction::Publish ? config().hooks.on_publish : config().hooks.on_play;
  if (url.empty()) {
    take_seat(action, app, outcome);
    done(std::move(outcome));
    return 0;
  }
  event.action = std::string(access_action_name(action));
  const char* hook = action == AccessAction::Publish ? "on_publish" : "on_play";
  const bool fail_open = config().hooks.fail_open;
  // The app as it was asked about, even if a reload comes before the answer.
  return hooks_.post(request_for(url, event), [action, app = loop_.keep(app), hook, fail_open, done = std::move(done),
                                               name = outcome.name](HookReply&& reply) {
    AccessOutcome later;
    later.name = name;
    if (apply_verdict(hook_verdict(reply, hook, fail_open), later)) take_seat(action, *app, later);
    done(std::move(later));
  });
}

uint64_t AccessGate::connect(HookEvent event, AccessDone done) {
  if (config().hooks.on_connect.empty()) {
    done(AccessOutcome{});
    return 0;
  }
  event.action = "connect";
  const bool fail_open = config().hooks.fail_open;
  return hooks_.post(request_for(config().hooks.on_connect, event),
                     [fail_open, done = std::move(done)](HookReply&& reply) {
                       AccessOutcome later;
                       apply_verdict(hook_verdict(reply, "on_connect", fail_open), later);
                       done(std::move(later));
                     });
}

void AccessGate::notify_done(AccessAction action, HookEvent event) {
  const std::string& url =
      action == AccessAction::Publish ? config().hooks.on_publish_done : config().hooks.on_play_done;
  if (url.empty()) return;
  event.action = action == AccessAction::Publish ? "publish_done" : "play_done";
  hooks_.post_reliably(request_for(url, event), config().hooks.done_attempts, config().hooks.retry_delay);
}

void AccessGate::notify_stream_alert(HookEvent event) {
  if (config().hooks.on_stream_alert.empty()) return;
  event.action = "stream_alert";
  hooks_.post_reliably(request_for(config().hooks.on_stream_alert, event), config().hooks.done_attempts,
                       config().hooks.retry_delay);
}

void AccessGate::notify_record_done(HookEvent event) {
  if (config().hooks.on_record_done.empty()) return;
  event.action = "record_done";
  hooks_.post_reliably(request_for(config().hooks.on_record_done, event), config().hooks.done_attempts,
                       config().hooks.retry_delay);
}

}  // namespace sluice::server
