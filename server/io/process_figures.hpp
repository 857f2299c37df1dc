// The process's own figures, read from the kernel (getrusage, /proc/self): what /metrics reports
// under the standard Prometheus process collector's names (process_cpu_seconds_total, ...) and
// what the history of the built-in page's plots samples (server/api/history_sampler.cpp).
// Linux only, as the server is; a figure that cannot be read is 0.
#pragma once

#include <cstdint>

namespace sluice::server {

struct ProcessFigures {
  double cpu_seconds = 0;        // user and system time of every thread, ever
  uint64_t resident_bytes = 0;   // resident memory now (/proc/self/statm)
  uint64_t open_fds = 0;         // entries of /proc/self/fd
  double start_time_unix_s = 0;  // when the process started (/proc/self/stat and the boot time)
};

// CPU time and resident memory: cheap, for every sample.
ProcessFigures process_usage();
// Also the open descriptors and the start time, for /metrics.
ProcessFigures process_figures();

}  // namespace sluice::server
