// media/rtp/rtx: an RTX packet made the original again (payload type, SSRC, sequence number,
// header extension kept, padding dropped); a padding probe restores nothing.
#include <doctest/doctest.h>

#include <vector>

#include "media/rtp/rtp_packet.hpp"
#include "media/rtp/rtx.hpp"
#include "unit/test_bytes.hpp"

using namespace sluice;
using namespace sluice::media::rtp;
using sluice::test::Bytes;
using sluice::test::hex;

TEST_CASE("an RTX packet with an extension and padding becomes the original packet") {
  // V=2 P=1 X=1; M=1 PT=97 (rtx); seq 0x0100; ts 0x1234; ssrc 0xcafef00d; BEDE len 1: id 1 "aa bb";
  // payload: OSN 0xfffe, then "65 01 02"; 2 bytes of padding.
  const Bytes p = hex("b0 e1 01 00 00 00 12 34 ca fe f0 0d  be de 00 01 11 aa bb 00  ff fe 65 01 02 00 02");
  auto rtx = parse_rtp(p);
  REQUIRE(rtx.ok());
  std::vector<uint8_t> out;
  REQUIRE(restore_rtx(p, *rtx, 96, 0x11223344, out));
  auto original = parse_rtp(out);
  REQUIRE(original.ok());
  CHECK(original->marker);
  CHECK(original->payload_type == 96);
  CHECK(original->sequence == 0xfffe);
  CHECK(original->timestamp == 0x1234);
  CHECK(original->ssrc == 0x11223344);
  CHECK(original->padding == 0);
  CHECK(Bytes(original->payload.begin(), original->payload.end()) == hex("65 01 02"));
  REQUIRE(find_extension(*original, 1).has_value());
  CHECK(Bytes(find_extension(*original, 1)->begin(), find_extension(*original, 1)->end()) == hex("aa bb"));
}

TEST_CASE("an RTX padding probe (no original sequence number) restores nothing") {
  const Bytes p = hex("a0 61 01 00 00 00 12 34 ca fe f0 0d  00 00 00 04");  // padding only
  auto rtx = parse_rtp(p);
  REQUIRE(rtx.ok());
  std::vector<uint8_t> out;
  CHECK_FALSE(restore_rtx(p, *rtx, 96, 1, out));
  const Bytes one = hex("80 61 01 00 00 00 12 34 ca fe f0 0d  ff");  // one byte: not a sequence number
  auto short_rtx = parse_rtp(one);
  REQUIRE(short_rtx.ok());
  CHECK_FALSE(restore_rtx(one, *short_rtx, 96, 1, out));
}
