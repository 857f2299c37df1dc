// STUN (protocol/webrtc/stun.hpp, stun_writer.hpp, ice_lite.hpp, datagram_kind.hpp): RFC 5769's
// test vectors, a Binding request built the way Chromium sends one, the ICE-lite answers, and what
// is refused.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "base/byte_io.hpp"
#include "protocol/webrtc/datagram_kind.hpp"
#include "protocol/webrtc/ice_lite.hpp"
#include "protocol/webrtc/stun.hpp"
#include "protocol/webrtc/stun_writer.hpp"
#include "unit/test_bytes.hpp"

using namespace sluice;
using namespace sluice::protocol;
using namespace sluice::protocol::webrtc;
using sluice::test::Bytes;
using sluice::test::hex;

namespace {

// RFC 5769 2.1-2.3, with their password.
constexpr std::string_view kRfcPassword = "VOkJxbRl1RmTxUk/WvJxBt";

const Bytes kSampleRequest =
    hex("00010058 2112a442 b7e7a701 bc34d686 fa87dfae"
        "80220010 5354554e 20746573 7420636c 69656e74"  // SOFTWARE "STUN test client"
        "00240004 6e0001ff"                             // PRIORITY
        "80290008 932ff9b1 51263b36"                    // ICE-CONTROLLED
        "00060009 6576746a 3a683676 59202020"           // USERNAME "evtj:h6vY", padded with spaces
        "00080014 9aeaa70c bfd8cb56 781ef2b5 b2d3f249 c1b571a2"
        "80280004 e57a3bcf");

const Bytes kSampleIpv4Response =
    hex("0101003c 2112a442 b7e7a701 bc34d686 fa87dfae"
        "8022000b 74657374 20766563 746f7220"  // SOFTWARE "test vector"
        "00200008 0001a147 e112a643"           // XOR-MAPPED-ADDRESS 192.0.2.1:32853
        "00080014 2b91f599 fd9e90c3 8c7489f9 2af9ba53 f06be7d7"
        "80280004 c07d4c96");

const Bytes kSampleIpv6Response =
    hex("01010048 2112a442 b7e7a701 bc34d686 fa87dfae"
        "8022000b 74657374 20766563 746f7220"
        "00200014 0002a147 0113a9fa a5d3f179 bc25f4b5 bed2b9d9"  // 2001:db8:1234:5678:11:2233:4455:6677
        "00080014 a382954e 4be67bf1 1784c97c 8292c275 bfe3ed41"
        "80280004 c8fb0b4c");

Endpoint endpoint(std::string_view address, uint16_t port) {
  auto ip = address.find(':') == std::string_view::npos ? parse_ipv4(address) : parse_ipv6(address);
  REQUIRE(ip.has_value());
  return Endpoint{*ip, port};
}

const StunTransactionId kTid = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};

// A Binding request as Chromium sends one to an ICE-lite answerer (docs/webrtc-protocol.md, "What
// Chromium sends"): USERNAME, GOOG-NETWORK-INFO, ICE-CONTROLLING, USE-CANDIDATE, PRIORITY,
// MESSAGE-INTEGRITY, FINGERPRINT.
Bytes chromium_request(std::string_view username, std::string_view pwd, bool use_candidate = true) {
  StunWriter w(kStunBinding, StunClass::Request, kTid);
  w.add_string(stun_attribute::kUsername, username);
  w.add_u32(stun_attribute::kGoogNetworkInfo, 0x00010000);
  w.add_u64(stun_attribute::kIceControlling, 0x1122334455667788);
  if (use_candidate) w.add_flag(stun_attribute::kUseCandidate);
  w.add_u32(stun_attribute::kPriority, 0x6e7f1eff);
  return std::move(w).finish(pwd);
}

}  // namespace

TEST_CASE("RFC 5769 2.1: the sample request") {
  auto m = parse_stun(kSampleRequest);
  REQUIRE(m.ok());
  CHECK(m->is_binding_request());
  CHECK(m->transaction_id == StunTransactionId{0xb7, 0xe7, 0xa7, 0x01, 0xbc, 0x34, 0xd6, 0x86, 0xfa, 0x87, 0xdf, 0xae});
  CHECK(m->username == "evtj:h6vY");
  CHECK(m->priority == 0x6e0001ffu);
  CHECK(m->ice_controlled == 0x932ff9b151263b36u);
  CHECK_FALSE(m->ice_controlling);
  CHECK_FALSE(m->use_candidate);
  CHECK(m->has_fingerprint);
  CHECK(m->integrity_offset == size_t{76});
  CHECK(m->unknown_required_count == 0);  // SOFTWARE is comprehension-optional
  CHECK(stun_integrity_ok(*m, kRfcPassword));
  CHECK_FALSE(stun_integrity_ok(*m, "VOkJxbRl1RmTxUk/WvJxBu"));
  CHECK(stun_local_ufrag(*m) == "evtj");
}

TEST_CASE("RFC 5769 2.2 and 2.3: the sample responses") {
  auto v4 = parse_stun(kSampleIpv4Response);
  REQUIRE(v4.ok());
  CHECK(v4->kind == StunClass::SuccessResponse);
  CHECK(v4->method == kStunBinding);
  REQUIRE(v4->xor_mapped_address);
  CHECK(*v4->xor_mapped_address == endpoint("192.0.2.1", 32853));
  CHECK(stun_integrity_ok(*v4, kRfcPassword));

  auto v6 = parse_stun(kSampleIpv6Response);
  REQUIRE(v6.ok());
  REQUIRE(v6->xor_mapped_address);
  CHECK(*v6->xor_mapped_address == endpoint("2001:db8:1234:5678:11:2233:4455:6677", 32853));
  CHECK(stun_integrity_ok(*v6, kRfcPassword));
}

TEST_CASE("The writer rebuilds RFC 5769's responses") {
  // The vectors pad SOFTWARE with a space where the writer pads with zero; the padding is covered
  // by MESSAGE-INTEGRITY and FINGERPRINT, so the space goes in and both are computed again with
  // stun_integrity() and stun_fingerprint(), which must then give the vectors' values.
  auto rebuild = [](const Bytes& vector, const Endpoint& mapped) {
    auto request = parse_stun(kSampleRequest);
    REQUIRE(request.ok());
    StunWriter w(kStunBinding, StunClass::SuccessResponse, request->transaction_id);
    w.add_string(stun_attribute::kSoftware, "test vector");
    w.add_xor_address(stun_attribute::kXorMappedAddress, mapped);
    Bytes out = std::move(w).finish(kRfcPassword);
    REQUIRE(out.size() == vector.size());
    out[35] = 0x20;
    const size_t mi = out.size() - 8 - 24;
    const auto key = std::span(reinterpret_cast<const uint8_t*>(kRfcPassword.data()), kRfcPassword.size());
    const auto mac = stun_integrity(std::span(out).first(mi), key);
    std::copy(mac.begin(), mac.end(), out.begin() + static_cast<std::ptrdiff_t>(mi) + 4);
    store_u32be(out.data() + out.size() - 4, stun_fingerprint(std::span(out).first(out.size() - 8)));
    CHECK(out == vector);
  };
  rebuild(kSampleIpv4Response, endpoint("192.0.2.1", 32853));
  rebuild(kSampleIpv6Response, endpoint("2001:db8:1234:5678:11:2233:4455:6677", 32853));
}

TEST_CASE("The integrity length trick: FINGERPRINT after MESSAGE-INTEGRITY is not covered") {
  const Bytes with = chromium_request("srv1:cli1", "server-password-0123456789");
  auto m = parse_stun(with);
  REQUIRE(m.ok());
  CHECK(stun_integrity_ok(*m, "server-password-0123456789"));
  // The same message without FINGERPRINT has the same MESSAGE-INTEGRITY.
  StunWriter w(kStunBinding, StunClass::Request, kTid);
  w.add_string(stun_attribute::kUsername, "srv1:cli1");
  w.add_u32(stun_attribute::kGoogNetworkInfo, 0x00010000);
  w.add_u64(stun_attribute::kIceControlling, 0x1122334455667788);
  w.add_flag(stun_attribute::kUseCandidate);
  w.add_u32(stun_attribute::kPriority, 0x6e7f1eff);
  const Bytes without = std::move(w).finish(std::string_view("server-password-0123456789"), false);
  REQUIRE(without.size() + 8 == with.size());
  CHECK(std::equal(without.begin() + 4, without.end(), with.begin() + 4));
  auto bare = parse_stun(without);
  REQUIRE(bare.ok());
  CHECK_FALSE(bare->has_fingerprint);
  CHECK(stun_integrity_ok(*bare, "server-password-0123456789"));
}

TEST_CASE("ICE-lite: a Chromium check is answered with XOR-MAPPED-ADDRESS, integrity and fingerprint") {
  const IceCredentials creds{"srv1", "server-password-0123456789", "cli1"};
  for (const auto& peer : {endpoint("127.0.0.1", 50123), endpoint("2001:db8::7", 443)}) {
    const Bytes request = chromium_request("srv1:cli1", creds.local_pwd);
    auto m = parse_stun(request);
    REQUIRE(m.ok());
    CHECK(stun_local_ufrag(*m) == "srv1");
    auto out = answer_binding_request(*m, creds, peer);
    CHECK(out.action == BindingOutcome::Action::Answer);
    CHECK(out.authenticated);
    CHECK(out.nominated);
    CHECK(out.priority == 0x6e7f1effu);
    auto response = parse_stun(out.response);
    REQUIRE(response.ok());
    CHECK(response->kind == StunClass::SuccessResponse);
    CHECK(response->method == kStunBinding);
    CHECK(response->transaction_id == kTid);
    CHECK(response->xor_mapped_address == peer);
    CHECK(response->has_fingerprint);
    CHECK(stun_integrity_ok(*response, creds.local_pwd));
  }
}

TEST_CASE("ICE-lite: refusals and what is ignored") {
  const IceCredentials creds{"srv1", "server-password-0123456789", ""};
  const Endpoint peer = endpoint("192.0.2.9", 4000);
  auto answer = [&](const Bytes& datagram) {
    auto m = parse_stun(datagram);
    REQUIRE(m.ok());
    return answer_binding_request(*m, creds, peer);
  };
  auto error_code = [](const BindingOutcome& out) {
    auto r = parse_stun(out.response);
    REQUIRE(r.ok());
    CHECK(r->kind == StunClass::ErrorResponse);
    return r->error_code.value_or(0);
  };

  auto out = answer(chromium_request("srv1:cli1", "the-wrong-password"));
  CHECK(out.action == BindingOutcome::Action::Answer);
  CHECK_FALSE(out.authenticated);
  CHECK(error_code(out) == 401);
  CHECK(out.reason == "401: MESSAGE-INTEGRITY does not check");
  CHECK_FALSE(parse_stun(out.response)->integrity_offset);  // no integrity on a 401

  CHECK(error_code(answer(chromium_request("other:cli1", creds.local_pwd))) == 401);
  CHECK(error_code(answer(chromium_request("srv1", creds.local_pwd))) == 401);
  const IceCredentials strict{"srv1", creds.local_pwd, "cli2"};
  const Bytes request = chromium_request("srv1:cli1", creds.local_pwd);  // m's views point into it
  auto m = parse_stun(request);
  REQUIRE(m.ok());
  CHECK(answer_binding_request(*m, strict, peer).reason == "401: USERNAME does not end with the offer's ufrag");

  StunWriter no_integrity(kStunBinding, StunClass::Request, kTid);
  no_integrity.add_string(stun_attribute::kUsername, "srv1:cli1");
  CHECK(error_code(answer(std::move(no_integrity).finish(std::string_view{}))) == 400);

  StunWriter unknown(kStunBinding, StunClass::Request, kTid);
  unknown.add_string(stun_attribute::kUsername, "srv1:cli1");
  unknown.add_u32(0x7777, 1);
  auto out420 = answer(std::move(unknown).finish(creds.local_pwd));
  CHECK(error_code(out420) == 420);
  CHECK(stun_integrity_ok(*parse_stun(out420.response), creds.local_pwd));

  StunWriter controlled(kStunBinding, StunClass::Request, kTid);
  controlled.add_string(stun_attribute::kUsername, "srv1:cli1");
  controlled.add_u64(stun_attribute::kIceControlled, 5);
  CHECK(error_code(answer(std::move(controlled).finish(creds.local_pwd))) == 487);

  // Indications (keepalives) and responses: nothing goes back.
  StunWriter indication(kStunBinding, StunClass::Indication, kTid);
  CHECK(answer(std::move(indication).finish(std::string_view{})).action == BindingOutcome::Action::Ignore);
  CHECK(answer(kSampleIpv4Response).action == BindingOutcome::Action::Ignore);
}

TEST_CASE("parse_stun: bad input gets a precise error") {
  auto why = [](const Bytes& datagram) {
    auto m = parse_stun(datagram);
    REQUIRE_FALSE(m.ok());
    return m.error().message();
  };
  CHECK(why(hex("0001 0000 2112a442")) == "truncated: stun: 8 bytes, less than the 20-byte header");
  CHECK(why(Bytes(1501, 0)) == "limit_exceeded: stun: a message of 1501 bytes (at most 1500)");
  Bytes request = kSampleRequest;
  request[0] = 0x40;
  CHECK(why(request) == "malformed: stun: the first two bits are not zero");
  request[0] = 0x13;
  CHECK(why(request) == "malformed: stun: first byte 19 is outside STUN's 0..3 (RFC 7983)");
  request = kSampleRequest;
  request[4] = 0;
  CHECK(why(request) == "unsupported: stun: no magic cookie (RFC 3489 STUN)");
  request = kSampleRequest;
  request[3] = 0x5c;
  CHECK(why(request) == "malformed: stun: length 92 but 88 bytes follow the header");
  request[3] = 0x5a;
  CHECK(why(request) == "malformed: stun: length 90 is not a multiple of 4");
  request = kSampleRequest;
  request[22] = 0x01;  // SOFTWARE's length 0x0110
  CHECK(why(request) == "malformed: stun: attribute 0x8022 at byte 20: length 272 runs past the end");
  request = kSampleRequest;
  request.back() ^= 1;
  CHECK(why(request) == "malformed: stun: FINGERPRINT does not match");
  request = kSampleRequest;
  request[44] ^= 1;  // PRIORITY's value: the CRC no longer matches
  CHECK(why(request) == "malformed: stun: FINGERPRINT does not match");

  StunWriter w(kStunBinding, StunClass::Request, kTid);
  w.add_u32(stun_attribute::kPriority, 1);
  Bytes tail = std::move(w).finish(std::string_view{}, false);
  tail[3] += 8 + 4;  // FINGERPRINT, then an empty SOFTWARE
  const uint32_t crc = stun_fingerprint(tail);
  tail.insert(tail.end(),
              {0x80, 0x28, 0x00, 0x04, uint8_t(crc >> 24), uint8_t(crc >> 16), uint8_t(crc >> 8), uint8_t(crc)});
  tail.insert(tail.end(), {0x80, 0x22, 0x00, 0x00});
  CHECK(why(tail) == "malformed: stun: an attribute after FINGERPRINT");

  StunWriter bad_priority(kStunBinding, StunClass::Request, kTid);
  bad_priority.add(stun_attribute::kPriority, hex("0102"));
  CHECK(why(std::move(bad_priority).finish(std::string_view{})) == "malformed: stun: PRIORITY of 2 bytes (4 expected)");
  StunWriter bad_family(kStunBinding, StunClass::SuccessResponse, kTid);
  bad_family.add(stun_attribute::kXorMappedAddress, hex("0003 0000 00000000"));
  CHECK(why(std::move(bad_family).finish(std::string_view{})) ==
        "malformed: stun: XOR-MAPPED-ADDRESS family 3 (1 or 2)");
  StunWriter long_name(kStunBinding, StunClass::Request, kTid);
  long_name.add_string(stun_attribute::kUsername, std::string(513, 'u'));
  CHECK(why(std::move(long_name).finish(std::string_view{})) == "malformed: stun: USERNAME over 512 bytes");
}

TEST_CASE("Attributes after MESSAGE-INTEGRITY other than FINGERPRINT are ignored") {
  StunWriter w(kStunBinding, StunClass::Request, kTid);
  w.add_string(stun_attribute::kUsername, "srv1:cli1");
  Bytes msg = std::move(w).finish(std::string_view("pw"), false);
  // PRIORITY appended after MESSAGE-INTEGRITY, with the length field counting it.
  msg.insert(msg.end(), {0x00, 0x24, 0x00, 0x04, 0, 0, 0, 9});
  msg[3] += 8;
  auto m = parse_stun(msg);
  REQUIRE(m.ok());
  CHECK_FALSE(m->priority);
  CHECK(stun_integrity_ok(*m, "pw"));
}

TEST_CASE("RFC 7983: the first byte tells STUN, DTLS, RTP and RTCP apart") {
  CHECK(classify_datagram(kSampleRequest) == DatagramKind::Stun);
  CHECK(looks_like_stun(kSampleRequest));
  CHECK(classify_datagram(hex("16 fefd 0000")) == DatagramKind::Dtls);  // a DTLS 1.2 handshake record
  CHECK(classify_datagram(hex("17 fefd")) == DatagramKind::Dtls);
  CHECK(classify_datagram(hex("80 60 0001")) == DatagramKind::Rtp);   // PT 96
  CHECK(classify_datagram(hex("80 e0 0001")) == DatagramKind::Rtp);   // PT 96 with the marker
  CHECK(classify_datagram(hex("80 c8 0006")) == DatagramKind::Rtcp);  // SR
  CHECK(classify_datagram(hex("81 cd 0003")) == DatagramKind::Rtcp);  // RTPFB (NACK)
  CHECK(classify_datagram(hex("10")) == DatagramKind::Other);         // ZRTP
  CHECK(classify_datagram(hex("40")) == DatagramKind::Other);         // a TURN channel
  CHECK(classify_datagram(hex("ff")) == DatagramKind::Other);
  CHECK(classify_datagram({}) == DatagramKind::Other);
  CHECK_FALSE(looks_like_stun(hex("16 fefd 0000")));
}
