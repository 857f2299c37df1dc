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
  // S / budget seconds; above the knee the budget is budget x (knee / S)^2, so the hold is
  // S^3 / (budget x knee^2). In double: S^3 x 1000 leaves 64 bits at a few hundred thousand
  // sockets, and the result is capped at the ceiling anyway.
  const double s = static_cast<double>(sockets);
  double ms = s * 1000.0 / static_cast<double>(budget_);
  if (knee_ != 0 && sockets > knee_) {
    const double over = s / static_cast<double>(knee_);
    ms *= over * over;
  }
  // Rounded to the nearest ms: uv timers count whole milliseconds.
  if (ms >= static_cast<double>(ceiling_ms_)) return hold_ms_ = ceiling_ms_;
  return hold_ms_ = static_cast<uint64_t>(ms + 0.5);
}

}  // namespace sluice::server
