#include "bench/load/read_batching.hpp"

#include <algorithm>

#include "bench/load/clock.hpp"

namespace sluice::bench {

namespace {

// One read fills the shared 64 KiB buffer at most: a larger mark would only add delay.
constexpr int64_t kMaxLowWater = 64 * 1024;
// Below this, batching saves too little to be worth any delay (audio-only streams).
constexpr int64_t kMinLowWater = 4 * 1024;
constexpr int64_t kRateWindowNs = kNsPerSec;
// The mark changes only when the target moved by more than a quarter: fewer setsockopt calls.
constexpr int64_t kHysteresisDivisor = 4;

}  // namespace

int64_t ReadBatching::update(int64_t now_ns, uint64_t bytes_in) {
  if (batch_ms_ == 0) return -1;
  if (!started_) {
    started_ = true;
    window_start_ns_ = last_change_ns_ = now_ns;
    window_bytes_ = last_bytes_ = bytes_in;
    return -1;
  }
  if (bytes_in != last_bytes_) {
    last_bytes_ = bytes_in;
    last_change_ns_ = now_ns;
  } else if (current_ > 1 && now_ns - last_change_ns_ > std::max<int64_t>(3 * batch_ms_, 300) * kNsPerMs) {
    // Nothing for several batches: don't let a residue below the mark sit in the socket.
    current_ = 1;
    window_start_ns_ = now_ns;
    window_bytes_ = bytes_in;
    return current_;
  }
  if (now_ns - window_start_ns_ < kRateWindowNs) return -1;
  const double bytes_per_s =
      static_cast<double>(bytes_in - window_bytes_) * kNsPerSec / static_cast<double>(now_ns - window_start_ns_);
  window_start_ns_ = now_ns;
  window_bytes_ = bytes_in;
  auto target = static_cast<int64_t>(bytes_per_s * batch_ms_ / 1000);
  target = target < kMinLowWater ? 1 : std::min(target, kMaxLowWater);
  const int64_t diff = target > current_ ? target - current_ : current_ - target;
  if (diff * kHysteresisDivisor <= current_) return -1;
  current_ = target;
  return current_;
}

}  // namespace sluice::bench
