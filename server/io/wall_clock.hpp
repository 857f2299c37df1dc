// The wall clock in milliseconds since 1970, for what is shown or stored outside the process (the
// API's times, HLS program date-times, the cluster's node epoch). Timeouts use the loop's clock.
#pragma once

#include <chrono>
#include <cstdint>

namespace sluice::server {

inline int64_t wall_clock_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

}  // namespace sluice::server
