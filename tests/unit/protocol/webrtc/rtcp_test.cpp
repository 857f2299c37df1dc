// protocol/webrtc/rtcp: a compound as a browser sends it read whole; every packet Sluice writes
// read back; NACK's PID+BLP packing across the wrap; REMB's exponent and mantissa; the bounds.
#include <doctest/doctest.h>

#include <vector>

#include "protocol/webrtc/datagram_kind.hpp"
#include "protocol/webrtc/rtcp.hpp"
#include "unit/test_bytes.hpp"

using namespace sluice;
using namespace sluice::protocol::webrtc;
using sluice::test::Bytes;
using sluice::test::hex;

TEST_CASE("a receiver's compound: RR with a block, SDES, REMB, NACK, PLI, transport-wide feedback") {
  const Bytes rr =
      hex("81 c9 00 07  00 00 00 01  "  // RR, 1 block, from SSRC 1
          "00 00 00 0a  10 ff ff fe  00 01 00 05  00 00 00 20  12 34 56 78  00 01 00 00");
  const Bytes sdes = hex("81 ca 00 03  00 00 00 01  01 03 61 62 63 00 00 00");
  // REMB: 2 SSRCs, exponent 3, mantissa 125000 -> 1 000 000 b/s.
  const Bytes remb = hex("8f ce 00 06  00 00 00 01 00 00 00 00  52 45 4d 42  02 0d e8 48  00 00 00 0a 00 00 00 0b");
  const Bytes nack = hex("81 cd 00 03  00 00 00 01 00 00 00 0a  ff fe 80 03");
  const Bytes pli = hex("81 ce 00 02  00 00 00 01 00 00 00 0a");
  const Bytes twcc = hex("8f cd 00 05  00 00 00 01 00 00 00 0a  00 10 00 02  ff ff fe 07  20 01 00 00");
  const Bytes all = sluice::test::cat({rr, sdes, remb, nack, pli, twcc});
  auto c = parse_rtcp(all);
  REQUIRE(c.ok());
  REQUIRE(c->receiver_reports.size() == 1);
  const auto& b = c->receiver_reports[0].blocks.at(0);
  CHECK(b.ssrc == 10);
  CHECK(b.fraction_lost == 0x10);
  CHECK(b.cumulative_lost == -2);
  CHECK(b.highest_sequence == 0x10005);
  CHECK(b.jitter == 32);
  CHECK(b.last_sr == 0x12345678);
  CHECK(b.delay_since_last_sr == 0x10000);
  CHECK(c->sdes == 1);
  REQUIRE(c->rembs.size() == 1);
  CHECK(c->rembs[0].bitrate_bps == 1000000);
  CHECK(c->rembs[0].ssrcs == std::vector<uint32_t>{10, 11});
  REQUIRE(c->nacks.size() == 1);
  CHECK(c->nacks[0].media_ssrc == 10);
  // PID 65534 and BLP bits 0, 1 and 15: 65535, 0 and 14.
  CHECK(c->nacks[0].sequences == std::vector<uint16_t>{65534, 65535, 0, 14});
  REQUIRE(c->plis.size() == 1);
  CHECK(c->plis[0].media_ssrc == 10);
  REQUIRE(c->transport_feedback.size() == 1);
  CHECK(c->transport_feedback[0].base_sequence == 16);
  CHECK(c->transport_feedback[0].status_count == 2);
  CHECK(c->transport_feedback[0].reference_time == -2);
  CHECK(c->transport_feedback[0].feedback_count == 7);
  CHECK(c->unknown == 0);
}

TEST_CASE("what Sluice writes reads back") {
  std::vector<uint8_t> out;
  SenderReport sr{5, ntp_from_unix_us(1'700'000'000'500'000), 90000, 100, 120000, {}};
  sr.blocks.push_back({9, 3, -1, 70000, 12, compact_ntp(sr.ntp_time), 655});
  write_sender_report(sr, out);
  write_sdes_cname(5, "sluice", out);
  write_receiver_report({6, {}}, out);
  const uint16_t lost[] = {10, 65535, 12, 30, 10, 65534};
  write_nack(1, 2, lost, out);
  write_pli(1, 2, out);
  write_fir(1, 2, 7, out);
  const uint32_t ssrcs[] = {2};
  write_remb(1, 2'500'000, ssrcs, out);
  write_nack(1, 2, {}, out);  // nothing
  CHECK(out.size() % 4 == 0);
  auto c = parse_rtcp(out);
  REQUIRE(c.ok());
  REQUIRE(c->sender_reports.size() == 1);
  const auto& got = c->sender_reports[0];
  CHECK(got.ssrc == 5);
  CHECK((got.ntp_time >> 32) == 1'700'000'000ull + 2'208'988'800ull);
  CHECK((got.ntp_time & 0xFFFFFFFF) == 0x80000000);  // half a second
  CHECK(got.rtp_time == 90000);
  CHECK(got.octet_count == 120000);
  REQUIRE(got.blocks.size() == 1);
  CHECK(got.blocks[0].cumulative_lost == -1);
  CHECK(got.blocks[0].delay_since_last_sr == 655);
  CHECK(c->sdes == 1);
  REQUIRE(c->receiver_reports.size() == 1);
  CHECK(c->receiver_reports[0].blocks.empty());
  REQUIRE(c->nacks.size() == 1);
  // From 10 round the wrap: 10, 12, 30 (a pair of its own), 65534, 65535 (a third).
  CHECK(c->nacks[0].sequences == std::vector<uint16_t>{10, 12, 30, 65534, 65535});
  REQUIRE(c->plis.size() == 1);
  REQUIRE(c->firs.size() == 1);
  REQUIRE(c->firs[0].entries.size() == 1);
  CHECK(c->firs[0].entries[0].ssrc == 2);
  CHECK(c->firs[0].entries[0].sequence == 7);
  REQUIRE(c->rembs.size() == 1);
  // 2 500 000 needs exponent 4: 156250 x 16.
  CHECK(c->rembs[0].bitrate_bps == 2'500'000);
  CHECK(classify_datagram(out) == DatagramKind::Rtcp);
  CHECK(classify_datagram(hex("80 60 00 01 00 00 00 02 00 00 00 03")) == DatagramKind::Rtp);  // RTP, PT 96
}

TEST_CASE("REMB rounds down to its 18-bit mantissa") {
  std::vector<uint8_t> out;
  write_remb(1, 1'000'001, {}, out);
  auto c = parse_rtcp(out);
  REQUIRE(c.ok());
  REQUIRE(c->rembs.size() == 1);
  CHECK(c->rembs[0].bitrate_bps <= 1'000'001);
  CHECK(c->rembs[0].bitrate_bps > 1'000'001 - 8);
}

TEST_CASE("bounds and errors") {
  CHECK(parse_rtcp({}).error().code == Errc::Truncated);
  CHECK(parse_rtcp(hex("81 c9 00")).error().code == Errc::Truncated);
  CHECK(parse_rtcp(hex("41 c9 00 01 00 00 00 01")).error().code == Errc::BadVersion);
  CHECK(parse_rtcp(hex("81 c9 00 02 00 00 00 01")).error().code == Errc::Truncated);
  // A report count past its packet.
  CHECK(parse_rtcp(hex("81 c9 00 01 00 00 00 01")).error().code == Errc::Malformed);
  CHECK(parse_rtcp(hex("82 cb 00 01 00 00 00 01")).error().code == Errc::Malformed);
  // Padding: counted by its last byte, which must fit.
  auto padded = parse_rtcp(hex("a0 c9 00 02 00 00 00 01 00 00 00 04"));
  REQUIRE(padded.ok());
  CHECK(padded->receiver_reports.size() == 1);
  CHECK(parse_rtcp(hex("a0 c9 00 01 00 00 00 09")).error().code == Errc::Malformed);
  // Another application feedback than REMB, another RTPFB format, another type: skipped.
  auto other =
      parse_rtcp(hex("8f ce 00 03 00 00 00 01 00 00 00 00 41 42 43 44  83 cd 00 02 00 00 00 01 00 00 00 02"
                     "  80 d0 00 00"));
  REQUIRE(other.ok());
  CHECK(other->unknown == 3);
  // A REMB whose SSRC count runs past it.
  CHECK(parse_rtcp(hex("8f ce 00 04 00 00 00 01 00 00 00 00 52 45 4d 42 02 00 00 01")).error().code == Errc::Malformed);
  CHECK(parse_rtcp(hex("81 cd 00 01 00 00 00 01")).error().code == Errc::Malformed);
}
