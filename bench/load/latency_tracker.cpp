#include "bench/load/latency_tracker.hpp"

#include <iterator>

#include "bench/load/clock.hpp"

namespace sluice::bench {

namespace {
// Longer than any delay worth measuring; a message later than this counts as unmatched.
constexpr int64_t kHorizonNs = 30 * kNsPerSec;
}  // namespace

void LatencyTracker::on_sent(uint8_t type, uint32_t timestamp, int64_t now_ns) {
  ++sent_;
  // The first send wins: a repeated (type, timestamp) is matched against its first copy.
  sent_at_.try_emplace(key(type, timestamp), now_ns);
}

void LatencyTracker::on_received(uint8_t type, uint32_t timestamp, int64_t now_ns) {
  auto it = sent_at_.find(key(type, timestamp));
  if (it == sent_at_.end()) {
    ++unmatched_;
    return;
  }
  delays_ms_.push_back(static_cast<float>(static_cast<double>(now_ns - it->second) / kNsPerMs));
}

bool LatencyTracker::sent_at(uint8_t type, uint32_t timestamp, int64_t& ns) const {
  auto it = sent_at_.find(key(type, timestamp));
  if (it == sent_at_.end()) return false;
  ns = it->second;
  return true;
}

void LatencyTracker::prune(int64_t now_ns) {
  for (auto it = sent_at_.begin(); it != sent_at_.end();) {
    it = now_ns - it->second > kHorizonNs ? sent_at_.erase(it) : std::next(it);
  }
}

}  // namespace sluice::bench
