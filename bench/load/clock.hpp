// One monotonic clock for every measurement in the bench (TTFF, stalls, delay, pacing).
#pragma once

#include <uv.h>

#include <cstdint>
#include <cstdio>
#include <exception>

namespace sluice::bench {

inline int64_t now_ns() { return static_cast<int64_t>(uv_hrtime()); }
inline constexpr int64_t kNsPerMs = 1'000'000;
inline constexpr int64_t kNsPerSec = 1'000'000'000;

// Runs f and reports whether it returned normally. libuv callbacks go through this so that no
// exception (bad_alloc is the realistic one) unwinds through libuv's C frames.
template <typename F>
bool guarded(const char* where, F&& f) noexcept {
  try {
    f();
    return true;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sluice-bench: %s: %s\n", where, e.what());
  } catch (...) {
    std::fprintf(stderr, "sluice-bench: %s: unknown exception\n", where);
  }
  return false;
}

}  // namespace sluice::bench
