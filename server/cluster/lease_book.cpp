#include "server/cluster/lease_book.hpp"

#include <algorithm>
#include <string_view>
#include <utility>

namespace sluice::server::cluster {

namespace {

// KEYS[1] the stream key, ARGV[1] our value, ARGV[2] the lease in ms. Extends the key while it is
// ours, writes it again if it is gone (Redis restarted, or the key expired while Redis was
// unreachable and nobody else claimed it), and leaves another node's value alone.
constexpr const char* kRefreshScript =
    "local v = redis.call('GET', KEYS[1]) "
    "if v == ARGV[1] then redis.call('PEXPIRE', KEYS[1], ARGV[2]) return 1 end "
    "if not v then redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) return 1 end "
    "return 0";

// Deletes the key only while it is ours: a release never frees another node's claim.
constexpr const char* kReleaseScript =
    "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0";

// KEYS[1] the stream key: ARGV[1] -> ARGV[2] (lease ARGV[3] ms) only while the value is ARGV[1]; 1
// when swapped. A draining node marks its claims with it, and another node takes a marked one.
constexpr const char* kSwapScript =
    "if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3]) return 1 end "
    "return 0";

constexpr std::string_view kDrainingSuffix = " draining";

}  // namespace

LeaseBook::LeaseBook(std::string node_id, uint64_t epoch, std::chrono::milliseconds lease)
    : node_id_(std::move(node_id)), value_(node_id_ + " " + std::to_string(epoch)), lease_(lease) {}

std::string LeaseBook::owner_of(const std::string& value) { return value.substr(0, value.find(' ')); }

RegistryCommand LeaseBook::claim(const std::string& stream) {
  return {{"SET", key_of(stream), value_, "NX", "PX", std::to_string(lease_.count())}};
}

ClaimResult LeaseBook::on_claim_reply(const std::string& stream, const std::optional<std::string>& reply,
                                      int64_t now_ms) {
  if (!reply) return ClaimResult::Unreachable;
  if (*reply != "OK") return ClaimResult::OwnedByOther;
  owned_[stream] = Claim{now_ms + lease_.count() / 3, false};
  return ClaimResult::Owned;
}

std::vector<std::pair<std::string, RegistryCommand>> LeaseBook::due_refreshes(int64_t now_ms) {
  std::vector<std::pair<std::string, RegistryCommand>> out;
  for (auto& [stream, c] : owned_) {
    if (c.in_flight || now_ms < c.next_refresh_ms) continue;
    c.in_flight = true;
    out.push_back({stream, refresh(stream)});
  }
  return out;
}

std::optional<RegistryCommand> LeaseBook::refresh_now(const std::string& stream) {
  auto it = owned_.find(stream);
  if (it == owned_.end()) return std::nullopt;
  if (it->second.in_flight) {
    it->second.again = true;
    return std::nullopt;
  }
  it->second.in_flight = true;  // its answer sets the next refresh
  return refresh(stream);
}

RegistryCommand LeaseBook::refresh(const std::string& stream) const {
  return {{"EVAL", kRefreshScript, "1", key_of(stream), value_, std::to_string(lease_.count())}};
}

bool LeaseBook::on_refresh_reply(const std::string& stream, std::optional<int64_t> reply, int64_t now_ms) {
  auto it = owned_.find(stream);
  if (it == owned_.end()) return false;  // released meanwhile
  it->second.in_flight = false;
  if (!reply) {
    // Unreachable: keep the stream, try again soon (a second, or sooner for short leases).
    it->second.next_refresh_ms = now_ms + std::min<int64_t>(1000, lease_.count() / 3);
    return false;
  }
  if (*reply == 1) {
    it->second.next_refresh_ms = std::exchange(it->second.again, false) ? now_ms : now_ms + lease_.count() / 3;
    return false;
  }
  owned_.erase(it);
  return true;
}

std::optional<RegistryCommand> LeaseBook::release(const std::string& stream) {
  if (owned_.erase(stream) == 0) return std::nullopt;
  return RegistryCommand{{"EVAL", kReleaseScript, "1", key_of(stream), value_}};
}

std::vector<RegistryCommand> LeaseBook::start_draining() {
  std::vector<RegistryCommand> out;
  if (draining_) return out;
  draining_ = true;
  const std::string before = value_;
  value_ += kDrainingSuffix;
  // On the loop's one connection these run after any refresh already sent with the old value, and
  // every later refresh or release carries the new one.
  for (const auto& [stream, c] : owned_) out.push_back(swap(stream, before, value_));
  return out;
}

bool LeaseBook::is_draining_value(const std::string& value) {
  return value.size() > kDrainingSuffix.size() &&
         value.compare(value.size() - kDrainingSuffix.size(), kDrainingSuffix.size(), kDrainingSuffix) == 0;
}

RegistryCommand LeaseBook::take_over(const std::string& stream, const std::string& seen) const {
  return swap(stream, seen, value_);
}

RegistryCommand LeaseBook::swap(const std::string& stream, const std::string& from, const std::string& to) const {
  return {{"EVAL", kSwapScript, "1", key_of(stream), from, to, std::to_string(lease_.count())}};
}

std::vector<std::string> LeaseBook::owned() const {
  std::vector<std::string> out;
  out.reserve(owned_.size());
  for (const auto& [stream, c] : owned_) out.push_back(stream);
  return out;
}

}  // namespace sluice::server::cluster
