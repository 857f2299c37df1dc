// protocol/webrtc/receive_statistics: the report block's extended highest number across the
// wrap, loss in all and since the last report, the jitter of RFC 3550 A.8, LSR and DLSR.
#include <doctest/doctest.h>

#include "protocol/webrtc/receive_statistics.hpp"

using namespace sluice::protocol::webrtc;

TEST_CASE("loss since the last report and in all, across the wrap; a retransmission counts as received") {
  ReceiveStatistics s(90000);
  CHECK(s.report(7, 0).highest_sequence == 0);  // nothing yet: an empty block
  for (uint16_t seq : {65530, 65531, 65532, 65533}) s.on_packet(seq, 0, 0);
  // 65534, 65535, 0 and 1 are lost; 2..5 arrive.
  for (uint16_t seq : {2, 3, 4, 5}) s.on_packet(seq, 0, 0);
  ReportBlock b = s.report(7, 10);
  CHECK(b.ssrc == 7);
  CHECK(b.highest_sequence == 65536 + 5);
  CHECK(b.cumulative_lost == 4);
  CHECK(b.fraction_lost == 4 * 256 / 12);
  s.on_packet(65535, 0, 20);  // late, or retransmitted
  s.on_packet(6, 0, 20);
  b = s.report(7, 30);
  CHECK(b.highest_sequence == 65536 + 6);
  CHECK(b.cumulative_lost == 3);
  CHECK(b.fraction_lost == 0);  // two came for one expected: none lost in this interval
  CHECK(s.lost() == 3);
  CHECK(s.received() == 10);
}

TEST_CASE("jitter: steady arrivals give none; a packet 10 ms late gives 1/16 of it") {
  ReceiveStatistics s(90000);
  for (int i = 0; i < 10; ++i) s.on_packet(static_cast<uint16_t>(i), static_cast<uint32_t>(i * 3000), i * 33 + 1000);
  // 33 ms apart at 90 kHz is 2970 units against 3000: 30 each time, converging on 30.
  const uint32_t steady = s.report(1, 2000).jitter;
  CHECK(steady <= 30);
  CHECK(steady >= 10);
  ReceiveStatistics t(90000);
  t.on_packet(0, 0, 1000);
  t.on_packet(1, 900, 1010);  // on time: 10 ms is 900 units
  CHECK(t.report(1, 2000).jitter == 0);
  t.on_packet(2, 1800, 1030);  // 10 ms late: D = 900 units
  CHECK(t.report(1, 2000).jitter == 900 / 16);
}

TEST_CASE("LSR is the last sender report's compact NTP time, DLSR the time since, in 1/65536 s") {
  ReceiveStatistics s(48000);
  s.on_packet(1, 0, 0);
  CHECK(s.report(1, 0).last_sr == 0);
  const uint64_t ntp = (uint64_t{0x12345678} << 32) | 0x9abcdef0;
  s.on_sender_report(ntp, 1000);
  const ReportBlock b = s.report(1, 1500);
  CHECK(b.last_sr == 0x56789abc);
  CHECK(b.delay_since_last_sr == 32768);  // half a second
}
