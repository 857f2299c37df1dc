// media/rtp/rtp_packet and rtp_sequence: the header read and written with CSRCs, one-byte and
// two-byte extensions and padding; every bound; sequence numbers and timestamps across the wrap.
#include <doctest/doctest.h>

#include <vector>

#include "media/rtp/rtp_packet.hpp"
#include "media/rtp/rtp_sequence.hpp"
#include "unit/test_bytes.hpp"

using namespace sluice;
using namespace sluice::media::rtp;
using sluice::test::Bytes;
using sluice::test::hex;

TEST_CASE("a packet with CSRCs, a one-byte extension and padding") {
  // V=2 P=1 X=1 CC=1; M=1 PT=111; seq 0xfffe; ts; ssrc; csrc; BEDE len 1: id 1 (2 bytes) + pad;
  // payload "ab cd"; 3 bytes of padding.
  const Bytes p = hex("b1 ef ff fe 00 00 12 34 de ad be ef 00 00 00 07  be de 00 01 11 aa bb 00  ab cd 00 00 03");
  auto v = parse_rtp(p);
  REQUIRE(v.ok());
  CHECK(v->marker);
  CHECK(v->payload_type == 111);
  CHECK(v->sequence == 0xfffe);
  CHECK(v->timestamp == 0x1234);
  CHECK(v->ssrc == 0xdeadbeef);
  CHECK(v->csrc_count == 1);
  CHECK(v->csrc(0) == 7);
  CHECK(v->csrc(1) == 0);
  CHECK(v->extension_profile == kOneByteExtensionProfile);
  CHECK(Bytes(v->payload.begin(), v->payload.end()) == hex("ab cd"));
  CHECK(v->padding == 3);
  auto ext = read_extensions(*v);
  REQUIRE(ext.ok());
  REQUIRE(ext->size() == 1);
  CHECK((*ext)[0].id == 1);
  CHECK(Bytes((*ext)[0].data.begin(), (*ext)[0].data.end()) == hex("aa bb"));
  auto found = find_extension(*v, 1);
  REQUIRE(found.has_value());
  CHECK(found->size() == 2);
  CHECK_FALSE(find_extension(*v, 2).has_value());
}

TEST_CASE("headers written are read back, with the extension form each needs") {
  const uint32_t csrcs[] = {1, 2};
  const Bytes a = hex("01 02 03"), b(20, 0x55), ff = hex("ff");
  SUBCASE("one-byte form") {
    const RtpExtension ext[] = {{3, a}, {14, ff}};
    std::vector<uint8_t> out;
    REQUIRE(write_rtp_header({true, 96, 65535, 0xffffffff, 42, csrcs, ext}, out).ok());
    CHECK(out.size() % 4 == 0);
    auto v = parse_rtp(out);
    REQUIRE(v.ok());
    CHECK(v->extension_profile == kOneByteExtensionProfile);
    CHECK(v->csrc(1) == 2);
    CHECK(v->payload.empty());
    auto e = read_extensions(*v);
    REQUIRE(e.ok());
    REQUIRE(e->size() == 2);
    CHECK((*e)[1].id == 14);
  }
  SUBCASE("two-byte form for a long element or a high id") {
    const RtpExtension ext[] = {{3, a}, {200, b}, {5, {}}};
    std::vector<uint8_t> out = {0xAA};  // appends after what is there
    REQUIRE(write_rtp_header({false, 0, 1, 2, 3, {}, ext}, out).ok());
    auto v = parse_rtp(std::span<const uint8_t>(out).subspan(1));
    REQUIRE(v.ok());
    CHECK((v->extension_profile & 0xfff0) == kTwoByteExtensionProfile);
    auto e = read_extensions(*v);
    REQUIRE(e.ok());
    REQUIRE(e->size() == 3);
    CHECK((*e)[1].id == 200);
    CHECK((*e)[1].data.size() == 20);
    CHECK((*e)[2].data.empty());
  }
  SUBCASE("refused") {
    std::vector<uint8_t> out;
    const RtpExtension zero[] = {{0, a}};
    CHECK_FALSE(write_rtp_header({false, 0, 1, 2, 3, {}, zero}, out).ok());
    CHECK_FALSE(write_rtp_header({false, 128, 1, 2, 3, {}, {}}, out).ok());
    CHECK(out.empty());
  }
}

TEST_CASE("bounds: every length is checked") {
  CHECK(parse_rtp(hex("80 60 00 01 00 00 00 02 00 00 00")).error().code == Errc::Truncated);
  CHECK(parse_rtp(hex("40 60 00 01 00 00 00 02 00 00 00 03")).error().code == Errc::BadVersion);
  CHECK(parse_rtp(hex("82 60 00 01 00 00 00 02 00 00 00 03 00 00 00 01")).error().code == Errc::Truncated);
  CHECK(parse_rtp(hex("90 60 00 01 00 00 00 02 00 00 00 03 be de 00 02 00 00 00 00")).error().code == Errc::Truncated);
  CHECK(parse_rtp(hex("a0 60 00 01 00 00 00 02 00 00 00 03 aa 00")).error().code == Errc::Malformed);
  CHECK(parse_rtp(hex("a0 60 00 01 00 00 00 02 00 00 00 03 aa 05")).error().code == Errc::Malformed);
  // Padding that is the whole payload is allowed.
  const Bytes padding_only = hex("a0 60 00 01 00 00 00 02 00 00 00 03 00 02");
  auto only_padding = parse_rtp(padding_only);
  REQUIRE(only_padding.ok());
  CHECK(only_padding->payload.empty());
  // An element past its extension; an unknown profile has no elements.
  const Bytes past = hex("90 60 00 01 00 00 00 02 00 00 00 03 be de 00 01 13 aa bb cc");
  auto v = parse_rtp(past);
  REQUIRE(v.ok());
  CHECK_FALSE(read_extensions(*v).ok());
  const Bytes other_profile = hex("90 60 00 01 00 00 00 02 00 00 00 03 12 34 00 01 13 aa bb cc");
  auto other = parse_rtp(other_profile);
  REQUIRE(other.ok());
  CHECK(read_extensions(*other)->empty());
  // Id 15 stops the one-byte form.
  const Bytes id15 = hex("90 60 00 01 00 00 00 02 00 00 00 03 be de 00 01 f0 13 aa bb");
  auto stop = parse_rtp(id15);
  REQUIRE(stop.ok());
  CHECK(read_extensions(*stop)->empty());
}

TEST_CASE("sequence numbers and timestamps across the wrap") {
  CHECK(seq_newer(0, 65535));
  CHECK_FALSE(seq_newer(65535, 0));
  CHECK(seq_diff(2, 65534) == 4);
  CHECK(seq_diff(65534, 2) == -4);
  SeqUnwrapper s;
  CHECK(s.unwrap(65534) == 65534);
  CHECK(s.unwrap(65535) == 65535);
  CHECK(s.unwrap(1) == 65537);
  CHECK(s.unwrap(65533) == 65533);  // a late one stays behind
  CHECK(s.unwrap(3) == 65539);
  TimestampUnwrapper t;
  CHECK(t.unwrap(0xFFFFFF00u) == 0xFFFFFF00);
  CHECK(t.unwrap(0x100) == 0x100000100);
  SeqUnwrapper early;
  CHECK(early.unwrap(0) == 0);
  CHECK(early.unwrap(65535) == -1);
}
