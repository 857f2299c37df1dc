// AccessGate: the one door every session passes, RTMP and HTTP alike. For a publish or a play it
// applies, in order, the app's rules (policy.hpp: addresses, keys, signed URLs), the decision hook
// (hooks.on_publish / on_play, through HookClient) and the app's limits (audience.hpp), and hands
// the caller an outcome: admitted (maybe under a new name, with a lifetime and a seat) or refused
// with a reason fit to show the client. Connect only asks hooks.on_connect. Every refusal is
// counted (server/io/guard_counters.hpp); the caller logs it and tells the client.
//
// One gate per worker loop (its HookClient is the loop's); the composition root owns it and
// closes it after the connections. docs/security.md describes the behaviour to users.
#pragma once

#include <uv.h>

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_set>

#include "config/config.hpp"
#include "server/access/audience.hpp"
#include "server/access/hook_client.hpp"
#include "server/access/hook_messages.hpp"
#include "server/access/policy.hpp"
#include "server/io/loop_context.hpp"

namespace sluice::server {

class AccessTicket;

enum class RefusedBy { Nobody, Rules, Hook, Limit };

struct AccessOutcome {
  RefusedBy refused_by = RefusedBy::Nobody;
  Denial denial = Denial::None;                           // for RefusedBy::Rules
  std::string reason;                                     // for the client and the log
  std::string name;                                       // the stream name to use (the hook may rename)
  uint64_t lifetime_s = 0;                                // 0: no limit
  Seat seat;                                              // held while the session lasts (publish and play)
  std::vector<std::pair<std::string, std::string>> push;  // the on_publish hook's push targets (url, key)
  bool allowed() const { return refused_by == RefusedBy::Nobody; }
};

using AccessDone = std::function<void(AccessOutcome&&)>;

class AccessGate {
 public:
  explicit AccessGate(const LoopContext& loop);
  AccessGate(const AccessGate&) = delete;
  AccessGate& operator=(const AccessGate&) = delete;

  // `event` says who asks (client id, address, app, stream, query, tcUrl, agent, protocol);
  // its action is set here. done runs exactly once: inside the call when no hook is asked (the
  // return value is then 0), else later on the loop (the return value can cancel it).
  uint64_t admit(AccessAction action, const config::AppConfig& app, std::span<const uint8_t> peer, HookEvent event,
                 AccessDone done);
  uint64_t connect(HookEvent event, AccessDone done);
  void cancel(uint64_t id) { hooks_.cancel(id); }

  // publish_done / play_done, at least once (hooks.done_attempts). No-op without a URL.
  void notify_done(AccessAction action, HookEvent event);
  // record_done (hooks.on_record_done), at least once like the other done hooks.
  void notify_record_done(HookEvent event);
  // stream_alert (hooks.on_stream_alert): an alert raised or cleared, at least once likewise.
  void notify_stream_alert(HookEvent event);

  // The settings in force now (a reload may change them between two callbacks).
  const config::Config& config() const { return loop_.config(); }
  // The tickets of this loop's sessions that have a connection (access_ticket.hpp), and
  // reload.recheck over them: the number of sessions it ended.
  void enroll(AccessTicket* t) { enrolled_.insert(t); }
  void withdraw(AccessTicket* t) { enrolled_.erase(t); }
  size_t recheck();
  // Hook calls still running or waiting for a retry (a stopping server lets them finish).
  size_t in_flight() const { return hooks_.in_flight(); }
  void close() { hooks_.close(); }

 private:
  HookRequest request_for(const std::string& url, HookEvent& event);
  // A play by another node of the cluster, with the internal token (docs/cluster.md, "Location").
  bool is_cluster_pull(std::string_view query) const;

  const LoopContext& loop_;
  std::unordered_set<AccessTicket*> enrolled_;
  HookClient hooks_;
  std::string host_name_;  // server_id when it is not set
};

// Seconds since the epoch, the clock signed URLs are checked against.
int64_t unix_now();

}  // namespace sluice::server
