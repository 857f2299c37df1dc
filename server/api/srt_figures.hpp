// The SRT side's figures for the stats API and /metrics (docs/srt.md, "Figures"): per connection,
// libsrt's own statistics (srt_bstats: round-trip time, packets lost, retransmitted and dropped,
// the receive buffer), and per server their sums. Every loop has SRT connections: a loop other
// than worker 0's puts its own into its snapshot (srt_loop_json), worker 0 adds them to its live
// ones (srt_totals). Part of the API wing, like http_figures.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>

namespace sluice::server {

class SrtService;
class ApiView;

struct SrtTotals {
  size_t connections = 0;
  size_t publishers = 0;
  size_t readers = 0;
  uint64_t bytes_in = 0;  // open connections
  uint64_t bytes_out = 0;
  uint64_t packets_lost = 0;           // received packets lost on the way (before retransmission)
  uint64_t packets_retransmitted = 0;  // sent again, or received again (a publisher's repaired losses)
  uint64_t packets_dropped = 0;        // given up (too late for the latency), both directions
};

// One loop's (`srt` may be null: SRT is off).
SrtTotals srt_loop_totals(SrtService* srt);
nlohmann::json srt_loop_json(SrtService& srt);
// Every loop's: this one's live figures and the other workers' snapshots.
SrtTotals srt_totals(ApiView& server);
nlohmann::json srt_totals_json(const SrtTotals& t);

// The loop's SRT connections as rows of /api/v1/clients, each with an "srt" object of libsrt's
// figures.
void add_srt_clients(SrtService& srt, uint64_t now_ms, uint32_t worker, nlohmann::json& rows);

}  // namespace sluice::server
