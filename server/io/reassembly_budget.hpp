// The server-wide budget for partially received messages. Each connection caps its own (the
// chunk reader's max_buffered_bytes), but N connections could still pin N times that; every
// connection reports what it holds after each read into one process-wide total, and the one
// that grows the total past limits.reassembly_budget is closed.
#pragma once

#include <atomic>
#include <cstdint>

namespace sluice::server {

class ReassemblyLease {
 public:
  ReassemblyLease() = default;
  ReassemblyLease(const ReassemblyLease&) = delete;
  ReassemblyLease& operator=(const ReassemblyLease&) = delete;
  ~ReassemblyLease() { update(0); }

  // This connection now holds `bytes`; false when it grew and the total is over budget.
  bool update(uint64_t bytes, uint64_t budget = UINT64_MAX) {
    if (bytes == held_) return true;
    const bool grew = bytes > held_;
    uint64_t total;
    if (grew) {
      total = total_().fetch_add(bytes - held_, std::memory_order_relaxed) + (bytes - held_);
    } else {
      total = total_().fetch_sub(held_ - bytes, std::memory_order_relaxed) - (held_ - bytes);
    }
    held_ = bytes;
    return !grew || total <= budget;
  }

  uint64_t held() const { return held_; }
  // Every connection's partial messages together.
  static uint64_t total() { return total_().load(std::memory_order_relaxed); }

 private:
  static std::atomic<uint64_t>& total_() {
    static std::atomic<uint64_t> t{0};
    return t;
  }
  uint64_t held_ = 0;
};

}  // namespace sluice::server
