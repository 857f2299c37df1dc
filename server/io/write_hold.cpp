#include "server/io/write_hold.hpp"

#include <algorithm>

namespace sluice::server {

WriteHold::WriteHold(uint64_t ceiling_ms, uint64_t writes_per_second, uint64_t knee)
    : ceiling_ms_(ceiling_ms),
      budget_(writes_per_second),
      knee_(knee),
      hold_ms_(writes_per_second == 0 ? ceiling_ms : 0) {}

uint64_t WriteHold::period_ended(size_t sockets) {
  if (budget_ == 0) return hold_ms_ = ceiling_ms_;
  // Above the knee, the budget is budget x knee / S: the hold is S^2 / (budget x knee).
  uint64_t per_second = budget_;
  uint64_t scale = 1;
  if (knee_ != 0 && sockets > knee_) {
    per_second = budget_ * knee_;
    scale = sockets;
  }
  // Rounded to the nearest ms: uv timers count whole milliseconds. (S^2 x 1000 stays far inside
  // 64 bits for any socket count a loop can hold.)
  const uint64_t ms = (uint64_t(sockets) * scale * 1000 + per_second / 2) / per_second;
  return hold_ms_ = std::min(ms, ceiling_ms_);
}

}  // namespace sluice::server
