// Process-wide recording figures for /metrics and the stats API: files finished, bytes written,
// failures, and recordings whose file is still being written or finalized (a stopping server
// waits for those, bounded).
#pragma once

#include <atomic>
#include <cstdint>

namespace sluice::server {

struct RecordStats {
  std::atomic<uint64_t> files_done{0};
  std::atomic<uint64_t> files_failed{0};
  std::atomic<uint64_t> bytes_written{0};
  std::atomic<uint64_t> files_open{0};     // started and not yet finalized
  std::atomic<uint64_t> files_removed{0};  // by retention (record.keep)

  static RecordStats& get() {
    static RecordStats s;
    return s;
  }
};

}  // namespace sluice::server
