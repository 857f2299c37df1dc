// server/io/machine_memory.hpp: the memory the server counts on (the machine's, or the cgroup's
// limit), and the reassembly budget "auto" makes of it.
#include <doctest/doctest.h>

#include <fstream>
#include <string>

#include "server/io/machine_memory.hpp"

using namespace sluice;
using namespace sluice::server;

TEST_CASE("machine memory: at most MemTotal, and the auto budget a sixteenth of it, at least 16 MiB") {
  std::ifstream in("/proc/meminfo");
  std::string key, unit;
  uint64_t kib = 0;
  uint64_t total = 0;
  while (in >> key >> kib >> unit) {
    if (key == "MemTotal:") total = kib * 1024;
  }
  REQUIRE(total > 0);
  const uint64_t mem = machine_memory_bytes();
  CHECK(mem > 0);
  CHECK(mem <= total);
  config::RtmpLimitsConfig limits;
  CHECK(limits.reassembly_budget == 0);  // auto
  CHECK(reassembly_budget_of(limits) == std::max<uint64_t>(16u << 20, mem / 16));
  limits.reassembly_budget = 300u << 20;
  CHECK(reassembly_budget_of(limits) == 300u << 20);
}
