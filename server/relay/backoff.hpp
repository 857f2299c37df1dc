// Backoff: when a relay tries again after a failure. Exponential from 1 s to a ceiling of 30 s,
// each delay drawn in [half, full] so that many relays cut off together (an upstream restart) do
// not all come back in the same instant. A connection that stayed up for a while resets it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <random>

namespace sluice::server {

class Backoff {
 public:
  static constexpr uint64_t kFirstMs = 1000;
  static constexpr uint64_t kMaxMs = 30'000;
  // A connection that lasted this long counts as a success: the next failure starts at kFirstMs.
  static constexpr uint64_t kStableMs = 10'000;

  // The delay before the next attempt, after `failures` failures in a row (>= 1).
  uint64_t next_delay_ms() {
    const uint32_t shift = std::min<uint32_t>(failures_, 5);
    ++failures_;
    const uint64_t full = std::min<uint64_t>(kMaxMs, kFirstMs << shift);
    std::uniform_int_distribution<uint64_t> pick(full / 2, full);
    return pick(rng_);
  }
  void reset() { failures_ = 0; }
  uint32_t failures() const { return failures_; }

 private:
  uint32_t failures_ = 0;
  std::minstd_rand rng_{std::random_device{}()};
};

}  // namespace sluice::server
