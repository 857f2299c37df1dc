// How much memory this process may count on: the machine's (MemTotal) or, inside a container or a
// systemd slice with a limit, the cgroup's (v2 memory.max, v1 memory.limit_in_bytes), whichever is
// smaller. Defaults that must fit a small server are fractions of it (docs/configuration.md).
#pragma once

#include <cstdint>

#include "config/config.hpp"

namespace sluice::server {

// Bytes; read once (the limits do not change under a running process often enough to matter).
uint64_t machine_memory_bytes();

// rtmp.limits.reassembly_budget as it applies: the configured size, or with "auto" (0) a
// sixteenth of machine_memory_bytes(), at least 16 MiB.
uint64_t reassembly_budget_of(const config::RtmpLimitsConfig& limits);

}  // namespace sluice::server
