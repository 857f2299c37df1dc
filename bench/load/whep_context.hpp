// WhepContext: what the WHEP load players of one run share (sluice-bench `whep`): the DTLS identity
// (one certificate and SSL_CTX for the process) and the figures that only WHEP has, summed over
// the players as each stops: the steps of the set-up (answer, ICE, DTLS, first frame), RTP loss
// and frames, consent checks, the DELETEs. Printed after the common summary and written as the
// JSON "whep" object.
#pragma once

#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "base/result.hpp"
#include "bench/load/dtls_client.hpp"
#include "bench/load/options.hpp"

namespace sluice::bench {

struct WhepTotals {
  // Per player, ms: POST sent -> 201 answer; first STUN request -> its success; ClientHello ->
  // handshake done; handshake done -> end of the first video frame.
  std::vector<double> answer_ms, ice_ms, dtls_ms, first_frame_ms;
  std::vector<double> max_frame_gap_ms;   // per player: the longest wait between two frames
  std::vector<double> video_clock_ratio;  // per player: RTP time advanced / wall time
  std::map<std::string, uint32_t> dtls;   // "DTLSv1.2/ECDHE-ECDSA-AES128-GCM-SHA256/SRTP_..." -> players
  uint64_t stun_requests = 0;             // ICE checks sent before the first success (retries included)
  uint64_t consent_sent = 0, consent_answered = 0, consent_refused = 0;
  uint64_t dtls_retransmissions = 0;
  uint64_t datagrams = 0;  // UDP datagrams received, all kinds
  uint64_t rtcp = 0;       // SRTCP (the server's sender reports)
  uint64_t video_packets = 0, video_lost = 0, audio_packets = 0, audio_lost = 0;
  uint64_t frames = 0, frames_incomplete = 0;
  uint64_t send_drops = 0;                  // STUN or DTLS datagrams the socket refused
  std::map<std::string, uint32_t> deletes;  // "200", "404", "error: ...", "timeout" -> players
};

class WhepContext {
 public:
  explicit WhepContext(const BenchOptions& options) : options_(options) {}
  Result<void> start();  // the certificate

  const BenchOptions& options() const { return options_; }
  const DtlsIdentity& identity() const { return *identity_; }
  WhepTotals& totals() { return totals_; }
  const WhepTotals& totals() const { return totals_; }

 private:
  const BenchOptions& options_;
  std::unique_ptr<DtlsIdentity> identity_;
  WhepTotals totals_;
};

void print_whep_summary(std::FILE* out, const WhepContext& ctx);
nlohmann::json whep_summary_json(const WhepContext& ctx);

}  // namespace sluice::bench
