// libFuzzer target for RTCP (protocol/webrtc/rtcp.hpp) and the NACK generator
// (protocol/webrtc/nack_generator.hpp): arbitrary bytes as one compound RTCP datagram.
// Properties: no crash or sanitizer report; what parses, written again with Sluice's writers
// (SR, RR, NACK, PLI, FIR, REMB), parses to the same values (a NACK to the same set of numbers);
// the NACKed numbers, taken as arrivals by a NackGenerator with a small bound, never leave it
// tracking more than the bound nor asking for a number twice in one poll.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <set>
#include <span>
#include <vector>

#include "protocol/webrtc/nack_generator.hpp"
#include "protocol/webrtc/datagram_kind.hpp"
#include "protocol/webrtc/rtcp.hpp"
#include "tests/fuzz/fuzz_input.hpp"

using namespace sluice;
using namespace sluice::protocol::webrtc;

namespace {

bool same_blocks(const std::vector<ReportBlock>& a, const std::vector<ReportBlock>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].ssrc != b[i].ssrc || a[i].fraction_lost != b[i].fraction_lost ||
        a[i].cumulative_lost != b[i].cumulative_lost || a[i].highest_sequence != b[i].highest_sequence ||
        a[i].jitter != b[i].jitter || a[i].last_sr != b[i].last_sr ||
        a[i].delay_since_last_sr != b[i].delay_since_last_sr) {
      return false;
    }
  }
  return true;
}

void check_rewritten(const RtcpCompound& c) {
  std::vector<uint8_t> out;
  for (const auto& sr : c.sender_reports) write_sender_report(sr, out);
  for (const auto& rr : c.receiver_reports) write_receiver_report(rr, out);
  for (const auto& n : c.nacks) write_nack(n.sender_ssrc, n.media_ssrc, n.sequences, out);
  for (const auto& p : c.plis) write_pli(p.sender_ssrc, p.media_ssrc, out);
  size_t fir_entries = 0;
  for (const auto& f : c.firs) {
    for (const auto& e : f.entries) {
      write_fir(f.sender_ssrc, e.ssrc, e.sequence, out);
      ++fir_entries;
    }
  }
  for (const auto& m : c.rembs) write_remb(m.sender_ssrc, m.bitrate_bps, m.ssrcs, out);
  if (out.empty()) return;
  auto again = parse_rtcp(out);
  FUZZ_CHECK(again.ok());
  FUZZ_CHECK(again->sender_reports.size() == c.sender_reports.size());
  for (size_t i = 0; i < c.sender_reports.size(); ++i) {
    const auto &a = c.sender_reports[i], &b = again->sender_reports[i];
    FUZZ_CHECK(a.ssrc == b.ssrc && a.ntp_time == b.ntp_time && a.rtp_time == b.rtp_time);
    FUZZ_CHECK(a.packet_count == b.packet_count && a.octet_count == b.octet_count);
    FUZZ_CHECK(same_blocks(a.blocks, b.blocks));
  }
  FUZZ_CHECK(again->receiver_reports.size() == c.receiver_reports.size());
  for (size_t i = 0; i < c.receiver_reports.size(); ++i) {
    FUZZ_CHECK(c.receiver_reports[i].ssrc == again->receiver_reports[i].ssrc);
    FUZZ_CHECK(same_blocks(c.receiver_reports[i].blocks, again->receiver_reports[i].blocks));
  }
  size_t nonempty_nacks = 0;
  for (const auto& n : c.nacks) nonempty_nacks += !n.sequences.empty();
  FUZZ_CHECK(again->nacks.size() == nonempty_nacks);
  for (size_t i = 0, j = 0; i < c.nacks.size(); ++i) {
    if (c.nacks[i].sequences.empty()) continue;
    const std::set<uint16_t> a(c.nacks[i].sequences.begin(), c.nacks[i].sequences.end());
    const std::set<uint16_t> b(again->nacks[j].sequences.begin(), again->nacks[j].sequences.end());
    FUZZ_CHECK(a == b);
    FUZZ_CHECK(again->nacks[j].media_ssrc == c.nacks[i].media_ssrc);
    ++j;
  }
  FUZZ_CHECK(again->plis.size() == c.plis.size());
  FUZZ_CHECK(again->firs.size() == fir_entries);
  FUZZ_CHECK(again->rembs.size() == c.rembs.size());
  for (size_t i = 0; i < c.rembs.size(); ++i) {
    FUZZ_CHECK(again->rembs[i].bitrate_bps == c.rembs[i].bitrate_bps);
    FUZZ_CHECK(again->rembs[i].ssrcs == c.rembs[i].ssrcs);
  }
}

void check_nack_generator(const RtcpCompound& c) {
  NackGenerator g(NackGenerator::Limits{64, 3, 5, 20});
  int64_t now = 0;
  std::vector<uint16_t> asked;
  for (const auto& n : c.nacks) {
    for (uint16_t s : n.sequences) {
      g.on_packet(s, now);
      FUZZ_CHECK(g.missing_now() <= 64);
      now += 3;
      asked.clear();
      g.poll(now, asked);
      std::sort(asked.begin(), asked.end());
      FUZZ_CHECK(std::adjacent_find(asked.begin(), asked.end()) == asked.end());
      FUZZ_CHECK(asked.size() <= 64);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto c = parse_rtcp({data, size});
  if (!c) return 0;
  check_rewritten(*c);
  check_nack_generator(*c);
  (void)classify_datagram({data, size});
  return 0;
}
