// Aggregation of per-client figures into what the bench prints: the live progress line, the
// final summary (text on stdout) and the same summary as JSON.
#pragma once

#include <sys/resource.h>

#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "bench/load/client.hpp"
#include "bench/load/options.hpp"

namespace sluice::bench {

class LatencyTracker;
struct HlsLatency;

struct Distribution {
  size_t count = 0;
  double p50 = 0, p90 = 0, p99 = 0, max = 0;
};
// Nearest-rank percentiles; sorts its argument.
Distribution distribution(std::vector<double>& values);

// Everything about the clients of one role.
struct RoleSummary {
  uint32_t clients = 0;  // asked for
  uint32_t started = 0;
  uint32_t ok = 0;
  uint32_t failed = 0;
  std::map<std::string, uint32_t> failure_reasons;
  uint64_t bytes_in = 0;
  uint64_t bytes_out = 0;
  uint64_t messages_in = 0;
  uint64_t messages_out = 0;
  Distribution setup_ms;  // connect start -> play / publish sent
  Distribution ttff_ms;
  Distribution tls_handshake_ms;      // rtmps://: TCP connected -> TLS handshake done
  double tls_handshake_total_ms = 0;  // the sum over the clients
  uint32_t keyframe_first = 0;        // first pictures that were keyframes (out of ttff_ms.count)
  uint32_t stalls = 0;
  uint32_t clients_with_stalls = 0;
  uint32_t non_monotonic = 0;
  uint32_t clients_non_monotonic = 0;
  uint32_t ended = 0;  // players whose play the server ended (VOD end, StreamEOF)
  uint32_t loops = 0;  // publishers: file restarts, all publishers together
  uint64_t max_backlog = 0;
  double max_late_ms = 0;  // publishers: worst lateness of a tag against real time
  // HLS readers.
  uint64_t playlists = 0;
  uint64_t http_errors = 0;
  uint32_t fell_behind = 0;
  uint32_t clients_fell_behind = 0;
  uint64_t parts_skipped = 0;
  uint64_t connects = 0;
  std::map<std::string, uint32_t> last_http_errors;  // readers by their latest error
};

struct CpuUsage {
  double user_s = 0;
  double sys_s = 0;
  long max_rss_kb = 0;
};
CpuUsage cpu_since(const rusage& start);

struct Summary {
  Mode mode = Mode::Play;
  const BenchOptions* options = nullptr;  // echoed in the JSON, for reproducibility
  std::vector<std::string> urls;
  double duration_s = 0;  // asked for
  double elapsed_s = 0;   // from the first connection to the stop
  RoleSummary players;
  RoleSummary publishers;
  // Latency mode only.
  Distribution delay_ms;
  uint64_t delay_unmatched = 0;
  // HLS mode (hls_latency.hpp): part received - publisher's send, and by PROGRAM-DATE-TIME.
  bool hls_low_latency = false;  // the options asked for parts (not --hls-segments)
  Distribution hls_publish_ms;
  Distribution hls_pdt_ms;
  uint64_t hls_unmatched = 0;
  CpuUsage cpu;
  // The bench's own loop: how late its 100 ms tick fired. Large values mean the bench was busy
  // (or starved of CPU) and its figures are suspect; small ones clear it.
  double loop_lag_max_ms = 0;
  uint64_t loop_lag_over_50ms = 0;  // ticks that fired more than 50 ms late
  uint64_t reads = 0;               // read callbacks with data, all connections
  uint64_t read_bytes = 0;
  std::string tls_negotiated;  // rtmps://: "TLSv1.3 TLS_AES_256_GCM_SHA384" (the first handshake)
};

// Client figures must be fresh (Client::stats() refreshes them).
RoleSummary summarize_role(const std::vector<const ClientStats*>& clients, uint32_t asked);
Distribution delay_distribution(const LatencyTracker& tracker);
Distribution float_distribution(const std::vector<float>& values);

void print_summary(std::FILE* out, const Summary& s);
nlohmann::json summary_json(const Summary& s, const std::vector<const ClientStats*>& clients, bool per_client);

}  // namespace sluice::bench
