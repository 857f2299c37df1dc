// OutputGuard: the bound on a connection's unsent output (replies it asked for and has not read,
// plus what waits in the socket). Above the soft bound the connection is not read any more, so a
// peer that sends cheap commands and never reads stops costing memory; once the output drains
// below half the soft bound reading resumes. Above the hard bound, or above the soft bound for
// longer than the timeout, the connection is closed. Sans-I/O: the socket asks it what to do.
#pragma once

#include <cstdint>

namespace sluice::server {

class OutputGuard {
 public:
  enum class Action { None, Pause, Resume, Close };

  void configure(uint64_t soft_bytes, uint64_t hard_bytes, uint64_t timeout_ms) {
    soft_ = soft_bytes;
    hard_ = hard_bytes;
    timeout_ms_ = timeout_ms;
  }

  // unsent: the connection's output not yet written; now_ms: the loop's clock.
  Action update(uint64_t unsent, uint64_t now_ms) {
    if (unsent > hard_) return Action::Close;
    if (paused_) {
      if (unsent <= soft_ / 2) {
        paused_ = false;
        return Action::Resume;
      }
      return now_ms - paused_since_ms_ > timeout_ms_ ? Action::Close : Action::None;
    }
    if (unsent <= soft_) return Action::None;
    paused_ = true;
    paused_since_ms_ = now_ms;
    return Action::Pause;
  }

  bool paused() const { return paused_; }
  uint64_t paused_for_ms(uint64_t now_ms) const { return paused_ ? now_ms - paused_since_ms_ : 0; }

 private:
  uint64_t soft_ = 1 << 20;
  uint64_t hard_ = 8 << 20;
  uint64_t timeout_ms_ = 30'000;
  bool paused_ = false;
  uint64_t paused_since_ms_ = 0;
};

}  // namespace sluice::server
