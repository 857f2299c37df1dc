// For unit tests that time a libuv loop on a loaded machine: how long this thread has been
// runnable but waiting for a CPU (the kernel's schedstat). Subtracted from a measured gap, it
// leaves what the code did (or blocked on), not what the neighbours of a parallel suite cost.
#pragma once

#include <cstdint>
#include <cstdio>

namespace sluice::test {

// Nanoseconds this thread has spent on a runqueue, waiting for a CPU (0 where schedstat is absent).
inline uint64_t runqueue_wait_ns() {
  FILE* f = fopen("/proc/thread-self/schedstat", "r");
  unsigned long long on_cpu = 0, waited = 0;
  if (f != nullptr) {
    if (fscanf(f, "%llu %llu", &on_cpu, &waited) != 2) waited = 0;
    fclose(f);
  }
  return waited;
}

}  // namespace sluice::test
