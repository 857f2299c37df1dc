#include "server/io/write_hold.hpp"

#include <algorithm>

namespace sluice::server {

WriteHold::WriteHold(uint64_t ceiling_ms, uint64_t writes_per_second)
    : ceiling_ms_(ceiling_ms), budget_(writes_per_second), hold_ms_(writes_per_second == 0 ? ceiling_ms : 0) {}

uint64_t WriteHold::period_ended(size_t sockets) {
  if (budget_ == 0) return hold_ms_ = ceiling_ms_;
  // Rounded to the nearest ms: uv timers count whole milliseconds.
  const uint64_t ms = (uint64_t(sockets) * 1000 + budget_ / 2) / budget_;
  return hold_ms_ = std::min(ms, ceiling_ms_);
}

}  // namespace sluice::server
