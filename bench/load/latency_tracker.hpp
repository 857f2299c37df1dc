// LatencyTracker: the delay the server adds, measured by publishing and playing in one process.
//
// The publisher records when it sent each audio/video message, keyed by (type, timestamp): for a
// single publication the server changes neither payloads nor timestamps, and the publisher's
// looping offset keeps timestamps unique. Each player looks its messages up on arrival; the
// delay is arrival minus send, on the same monotonic clock. Both ends run on the bench's loop,
// so the figure includes the bench's own scheduling delay: keep the player count modest (the
// CPU figure in the summary tells whether the bench was busy).
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

namespace sluice::bench {

class LatencyTracker {
 public:
  void on_sent(uint8_t type, uint32_t timestamp, int64_t now_ns);
  void on_received(uint8_t type, uint32_t timestamp, int64_t now_ns);
  // When the message (type, timestamp) was sent; false when it was not (or was pruned).
  bool sent_at(uint8_t type, uint32_t timestamp, int64_t& ns) const;
  // Forgets sends older than the horizon, so the table stays small over a long run.
  void prune(int64_t now_ns);

  // Delays in milliseconds, in arrival order.
  const std::vector<float>& delays_ms() const { return delays_ms_; }
  uint64_t unmatched() const { return unmatched_; }
  uint64_t sent() const { return sent_; }

 private:
  static uint64_t key(uint8_t type, uint32_t timestamp) { return (uint64_t{type} << 32) | timestamp; }

  std::unordered_map<uint64_t, int64_t> sent_at_;
  std::vector<float> delays_ms_;
  uint64_t unmatched_ = 0;
  uint64_t sent_ = 0;
};

}  // namespace sluice::bench
