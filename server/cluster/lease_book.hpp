// LeaseBook: this node's claims on stream names in the cluster registry (docs/cluster.md,
// "Ownership"), as commands to send and replies to read: no sockets, no timers, so every rule is
// tested without Redis (tests/unit/server/cluster/lease_book_test.cpp). The registry client sends
// what this returns and feeds the replies back.
//
// A claim is `SET sluice:stream:KEY "NODE EPOCH" NX PX lease`. While owned, the claim is refreshed
// every third of the lease by a script that extends it only while the value is still ours (and
// writes it again if the key is gone, as after a Redis restart); a refresh that finds another
// value means the stream was lost. A release deletes the key only if it is still ours. While Redis
// is unreachable nothing is lost: the streams go on and are refreshed when it answers again.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace sluice::server::cluster {

// One Redis command, as argv (the client sends it with redisAsyncCommandArgv).
struct RegistryCommand {
  std::vector<std::string> argv;
};

// What a claim came to.
enum class ClaimResult : uint8_t {
  Owned,         // ours now
  OwnedByOther,  // another node holds it (its id in `owner`)
  Unreachable,   // no answer from Redis: the caller decides (a publish is refused, see docs)
};

class LeaseBook {
 public:
  // `epoch` tells this run of the node from an earlier one with the same id.
  LeaseBook(std::string node_id, uint64_t epoch, std::chrono::milliseconds lease);

  static std::string key_of(const std::string& stream) { return "sluice:stream:" + stream; }
  // The value this node writes: "NODE EPOCH".
  const std::string& value() const { return value_; }
  // The node id in a value another node wrote (the text before the space).
  static std::string owner_of(const std::string& value);

  RegistryCommand claim(const std::string& stream);
  // The reply to claim(): "OK" (ours), nil (taken: `holder` is GET's answer if the client asked),
  // or no reply at all (nullopt: Redis unreachable).
  ClaimResult on_claim_reply(const std::string& stream, const std::optional<std::string>& reply, int64_t now_ms);

  // The refreshes due at now_ms, one command each (EVAL of the compare-and-extend script).
  std::vector<std::pair<std::string, RegistryCommand>> due_refreshes(int64_t now_ms);
  // The script's answer: 1 still ours, 0 another value (lost: the stream is forgotten and true is
  // returned so that the caller ends the publish), nullopt no answer (kept, retried next time).
  bool on_refresh_reply(const std::string& stream, std::optional<int64_t> reply, int64_t now_ms);

  // Another node says it took `stream` (docs/cluster.md, "A second publisher on another node"): the
  // refresh to send now, which finds out whether it is still ours. Nothing when the stream is not
  // ours, or when a refresh is in flight: that one may have been answered before the take, so
  // another goes out as soon as it is answered.
  std::optional<RegistryCommand> refresh_now(const std::string& stream);

  // Ours without an answer from Redis (it was unreachable when the publish came): the stream goes
  // on and its first refresh, as soon as Redis answers, writes the claim or finds it lost.
  void assume(const std::string& stream) { owned_[stream] = Claim{0, false}; }
  // Redis is back: every claim is refreshed at the next due_refreshes().
  void refresh_all_soon() {
    for (auto& [stream, c] : owned_) c.next_refresh_ms = 0;
  }

  // The publisher left: forget the stream; the command deletes the key if still ours.
  std::optional<RegistryCommand> release(const std::string& stream);

  // The node drains (docs/cluster.md, "Draining"): from now on its value is "NODE EPOCH draining",
  // and every claim is rewritten so, which tells other nodes that a publisher reconnecting to
  // them may take the stream at once. The commands swap each claim still ours.
  std::vector<RegistryCommand> start_draining();
  static bool is_draining_value(const std::string& value);
  bool draining() const { return draining_; }
  // Takes a claim another node holds, if it still holds `seen`: 1 when taken. A node that drains
  // marks its claims so that any may take them; a publisher replacing one on another node takes
  // an unmarked one (publish_conflict: takeover). The old owner finds it lost at its next refresh.
  RegistryCommand take_over(const std::string& stream, const std::string& seen) const;

  bool owns(const std::string& stream) const { return owned_.count(stream) != 0; }
  size_t owned_count() const { return owned_.size(); }
  std::vector<std::string> owned() const;
  std::chrono::milliseconds lease() const { return lease_; }

 private:
  struct Claim {
    int64_t next_refresh_ms = 0;
    bool in_flight = false;  // a refresh was sent and not answered yet
    bool again = false;      // ... and another is due as soon as it is answered
  };

  RegistryCommand refresh(const std::string& stream) const;
  RegistryCommand swap(const std::string& stream, const std::string& from, const std::string& to) const;

  std::string node_id_;
  std::string value_;
  bool draining_ = false;
  std::chrono::milliseconds lease_;
  std::map<std::string, Claim> owned_;
};

}  // namespace sluice::server::cluster
