#include "bench/load/whep_context.hpp"

#include <nlohmann/json.hpp>

#include "bench/load/stats.hpp"

namespace sluice::bench {

namespace {

std::string text(std::vector<double> v, int decimals) {
  const Distribution d = distribution(v);
  if (d.count == 0) return "none";
  char buf[160];
  std::snprintf(buf, sizeof buf, "p50=%.*f p90=%.*f p99=%.*f max=%.*f (n=%zu)", decimals, d.p50, decimals, d.p90,
                decimals, d.p99, decimals, d.max, d.count);
  return buf;
}

nlohmann::json dist_json(std::vector<double> v) {
  const Distribution d = distribution(v);
  return {{"count", d.count}, {"p50", d.p50}, {"p90", d.p90}, {"p99", d.p99}, {"max", d.max}};
}

double percent(uint64_t part, uint64_t whole) {
  return whole ? 100.0 * static_cast<double>(part) / static_cast<double>(part + whole) : 0;
}

}  // namespace

Result<void> WhepContext::start() {
  auto id = DtlsIdentity::create(options_.srtp_profiles);
  if (!id) return std::move(id).error();
  identity_ = std::move(*id);
  return {};
}

void print_whep_summary(std::FILE* out, const WhepContext& ctx) {
  const WhepTotals& t = ctx.totals();
  std::fprintf(out, "whep:\n");
  std::fprintf(out, "  answer ms (offer POSTed -> 201): %s\n", text(t.answer_ms, 1).c_str());
  std::fprintf(out, "  ice ms (first STUN check -> success): %s; checks sent %llu\n", text(t.ice_ms, 1).c_str(),
               (unsigned long long)t.stun_requests);
  std::fprintf(out, "  dtls ms (ClientHello -> handshake done): %s; retransmissions %llu\n", text(t.dtls_ms, 1).c_str(),
               (unsigned long long)t.dtls_retransmissions);
  for (const auto& [name, n] : t.dtls) std::fprintf(out, "  dtls x%u: %s\n", n, name.c_str());
  std::fprintf(out, "  first frame ms (handshake done -> end of the first video frame): %s\n",
               text(t.first_frame_ms, 1).c_str());
  std::fprintf(out, "  video: %llu packets, lost %llu (%.3f%%), %llu frames, incomplete %llu\n",
               (unsigned long long)t.video_packets, (unsigned long long)t.video_lost,
               percent(t.video_lost, t.video_packets), (unsigned long long)t.frames,
               (unsigned long long)t.frames_incomplete);
  std::fprintf(out, "  audio: %llu packets, lost %llu (%.3f%%); srtcp from the server %llu; datagrams in %llu\n",
               (unsigned long long)t.audio_packets, (unsigned long long)t.audio_lost,
               percent(t.audio_lost, t.audio_packets), (unsigned long long)t.rtcp, (unsigned long long)t.datagrams);
  std::fprintf(out, "  longest gap between frames ms, per player: %s (freeze: > %u ms)\n",
               text(t.max_frame_gap_ms, 0).c_str(), ctx.options().freeze_ms);
  std::fprintf(out, "  video clock / wall clock, per player: %s\n", text(t.video_clock_ratio, 3).c_str());
  std::fprintf(out, "  consent checks: sent %llu, answered %llu, refused %llu; datagrams the socket refused %llu\n",
               (unsigned long long)t.consent_sent, (unsigned long long)t.consent_answered,
               (unsigned long long)t.consent_refused, (unsigned long long)t.send_drops);
  std::string deletes;
  for (const auto& [what, n] : t.deletes) deletes += (deletes.empty() ? "" : ", ") + what + " x" + std::to_string(n);
  std::fprintf(out, "  DELETE: %s\n", deletes.empty() ? "none sent" : deletes.c_str());
}

nlohmann::json whep_summary_json(const WhepContext& ctx) {
  const WhepTotals& t = ctx.totals();
  nlohmann::json dtls = nlohmann::json::object();
  for (const auto& [name, n] : t.dtls) dtls[name] = n;
  nlohmann::json deletes = nlohmann::json::object();
  for (const auto& [what, n] : t.deletes) deletes[what] = n;
  return {{"answer_ms", dist_json(t.answer_ms)},
          {"ice_ms", dist_json(t.ice_ms)},
          {"dtls_ms", dist_json(t.dtls_ms)},
          {"first_frame_ms", dist_json(t.first_frame_ms)},
          {"max_frame_gap_ms", dist_json(t.max_frame_gap_ms)},
          {"video_clock_ratio", dist_json(t.video_clock_ratio)},
          {"dtls", dtls},
          {"stun_requests", t.stun_requests},
          {"consent_sent", t.consent_sent},
          {"consent_answered", t.consent_answered},
          {"consent_refused", t.consent_refused},
          {"dtls_retransmissions", t.dtls_retransmissions},
          {"datagrams", t.datagrams},
          {"rtcp", t.rtcp},
          {"video_packets", t.video_packets},
          {"video_lost", t.video_lost},
          {"audio_packets", t.audio_packets},
          {"audio_lost", t.audio_lost},
          {"frames", t.frames},
          {"frames_incomplete", t.frames_incomplete},
          {"send_drops", t.send_drops},
          {"deletes", deletes},
          {"freeze_ms", ctx.options().freeze_ms}};
}

}  // namespace sluice::bench
