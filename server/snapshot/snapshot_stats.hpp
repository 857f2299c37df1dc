// The snapshot service's counters, summed over every loop: /metrics shows them
// (server/api/metrics_text.cpp, sluice_snapshot_*). Process-wide atomics, like RecordStats.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>

namespace sluice::server {

// How a snapshot request was answered.
enum class SnapshotResult : uint8_t {
  Cached,      // 200 from a JPEG made before, of the same keyframe
  Decoded,     // 200 from the decode it waited for (coalesced with every request that came meanwhile)
  NoKeyframe,  // 503: the stream has no video keyframe yet (or no video)
  NoStream,    // 404: the stream is not live
  Busy,        // 503: every decode slot or cache slot is taken
  Error,       // 415 (not H.264/HEVC) or 500 (the keyframe did not decode)
};
inline constexpr std::array<const char*, 6> kSnapshotResults = {"cached",    "decoded", "no_keyframe",
                                                                "no_stream", "busy",    "error"};

struct SnapshotStats {
  std::atomic<uint64_t> decodes{0};  // keyframes decoded (and encoded), failed ones too
  std::atomic<uint64_t> decode_failures{0};
  std::atomic<uint64_t> decode_us{0};  // their time, decode + scale + encode
  std::array<std::atomic<uint64_t>, kSnapshotResults.size()> requests{};

  void count(SnapshotResult r) { requests[static_cast<size_t>(r)].fetch_add(1, std::memory_order_relaxed); }
  static SnapshotStats& get();
};

}  // namespace sluice::server
