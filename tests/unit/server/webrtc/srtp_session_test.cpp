// server/webrtc/srtp_session.hpp: libsrtp's reference packet (the vector its own validation
// checks: master key and salt, RTP and RTCP of SSRC 0xCAFEBABE) comes out byte for byte, so the
// key layout is the one libsrtp and every peer expect; then two sessions with the keys of a real
// DTLS handshake (server/webrtc/dtls_transport.hpp), for both profiles: RTP and RTCP protected on
// one side come out of the other byte-exact; a replayed packet is refused ("replay_fail"), a
// flipped bit fails authentication ("auth_fail"), a packet protected twice (a NACK answered from
// history) goes out twice, the same bytes both times.
#include <doctest/doctest.h>
#include <openssl/ssl.h>

#include <cstdint>
#include <span>
#include <vector>

#include "server/webrtc/dtls_transport.hpp"
#include "server/webrtc/srtp_session.hpp"
#include "server/webrtc/webrtc_certificate.hpp"

using namespace sluice;
using namespace sluice::server;

namespace {

using Bytes = std::vector<uint8_t>;

const Bytes kTestKey = {0xe1, 0xf9, 0x7a, 0x0d, 0x3e, 0x01, 0x8b, 0xe0, 0xd6, 0x4f, 0xa3, 0x2c, 0x06, 0xde, 0x41,
                        0x39, 0x0e, 0xc6, 0x75, 0xad, 0x49, 0x8a, 0xfe, 0xeb, 0xb6, 0x96, 0x0b, 0x3a, 0xab, 0xe6};
const Bytes kRtpPlain = {0x80, 0x0f, 0x12, 0x34, 0xde, 0xca, 0xfb, 0xad, 0xca, 0xfe, 0xba, 0xbe, 0xab, 0xab,
                         0xab, 0xab, 0xab, 0xab, 0xab, 0xab, 0xab, 0xab, 0xab, 0xab, 0xab, 0xab, 0xab, 0xab};
const Bytes kSrtp = {0x80, 0x0f, 0x12, 0x34, 0xde, 0xca, 0xfb, 0xad, 0xca, 0xfe, 0xba, 0xbe, 0x4e,
                     0x55, 0xdc, 0x4c, 0xe7, 0x99, 0x78, 0xd8, 0x8c, 0xa4, 0xd2, 0x15, 0x94, 0x9d,
                     0x24, 0x02, 0xb7, 0x8d, 0x6a, 0xcc, 0x99, 0xea, 0x17, 0x9b, 0x8d, 0xbb};
const Bytes kRtcpPlain = {0x81, 0xc8, 0x00, 0x0b, 0xca, 0xfe, 0xba, 0xbe, 0xab, 0xab, 0xab, 0xab,
                          0xab, 0xab, 0xab, 0xab, 0xab, 0xab, 0xab, 0xab, 0xab, 0xab, 0xab, 0xab};
const Bytes kSrtcp = {0x81, 0xc8, 0x00, 0x0b, 0xca, 0xfe, 0xba, 0xbe, 0x71, 0x28, 0x03, 0x5b, 0xe4,
                      0x87, 0xb9, 0xbd, 0xbe, 0xf8, 0x90, 0x41, 0xf9, 0x77, 0xa5, 0xa8, 0x80, 0x00,
                      0x00, 0x01, 0x99, 0x3e, 0x08, 0xcd, 0x54, 0xd6, 0xc1, 0x23, 0x07, 0x98};

SrtpKeys reference_keys() {
  SrtpKeys k;
  k.profile = SrtpProfile::Aes128CmSha1_80;
  k.size = kTestKey.size();
  std::copy(kTestKey.begin(), kTestKey.end(), k.local.begin());
  std::copy(kTestKey.begin(), kTestKey.end(), k.remote.begin());
  return k;
}

// The keys of both ends of a real handshake: the client's (active) and the server's (passive).
struct HandshakeKeys {
  SrtpKeys client, server;
};

HandshakeKeys handshake(const char* profiles = nullptr) {
  auto cc = WebrtcCertificate::generate();
  auto sc = WebrtcCertificate::generate();
  REQUIRE(cc.ok());
  REQUIRE(sc.ok());
  auto client = DtlsTransport::create(*cc, {DtlsRole::Active, (*sc)->fingerprint(), 20});
  auto server = DtlsTransport::create(*sc, {DtlsRole::Passive, (*cc)->fingerprint(), 20});
  REQUIRE(client.ok());
  REQUIRE(server.ok());
  if (profiles) REQUIRE(SSL_set_tlsext_use_srtp((*client)->native_handle(), profiles) == 0);
  DtlsTransport::Datagrams to_server, to_client;
  REQUIRE((*client)->start(to_server).ok());
  for (int round = 0; round < 10 && (!to_server.empty() || !to_client.empty()); ++round) {
    DtlsTransport::Datagrams a = std::move(to_server), b = std::move(to_client);
    to_server.clear();
    to_client.clear();
    for (auto& d : a) REQUIRE((*server)->on_datagram(d, to_client).ok());
    for (auto& d : b) REQUIRE((*client)->on_datagram(d, to_server).ok());
  }
  REQUIRE((*client)->state() == DtlsState::Connected);
  REQUIRE((*server)->state() == DtlsState::Connected);
  return {(*client)->srtp_keys(), (*server)->srtp_keys()};
}

std::unique_ptr<SrtpSession> session(const SrtpKeys& k, SrtpOptions o = {}) {
  auto s = SrtpSession::create(k, o);
  REQUIRE_MESSAGE(s.ok(), (s.ok() ? "" : s.error().message()));
  return std::move(*s);
}

Bytes rtp(uint16_t seq, uint32_t ssrc, size_t payload, uint8_t fill) {
  Bytes p = {0x80,
             96,
             static_cast<uint8_t>(seq >> 8),
             static_cast<uint8_t>(seq),
             0,
             0,
             0x10,
             0x00,
             static_cast<uint8_t>(ssrc >> 24),
             static_cast<uint8_t>(ssrc >> 16),
             static_cast<uint8_t>(ssrc >> 8),
             static_cast<uint8_t>(ssrc)};
  p.resize(12 + payload, fill);
  return p;
}

// A receiver report with one block, and a PLI after it (a compound packet as a player sends).
Bytes rtcp(uint32_t ssrc) {
  Bytes p = {0x81,
             201,
             0,
             7,
             static_cast<uint8_t>(ssrc >> 24),
             static_cast<uint8_t>(ssrc >> 16),
             static_cast<uint8_t>(ssrc >> 8),
             static_cast<uint8_t>(ssrc)};
  p.resize(32, 0x11);
  const Bytes pli = {0x81, 206, 0, 2, 0, 0, 0, 1, 0x12, 0x34, 0x56, 0x78};
  p.insert(p.end(), pli.begin(), pli.end());
  return p;
}

Result<Bytes> unprotect(SrtpSession& s, Bytes packet, bool is_rtcp = false) {
  std::span<uint8_t> view(packet);
  auto r = is_rtcp ? s.unprotect_rtcp(view) : s.unprotect_rtp(view);
  if (!r) return std::move(r).error();
  return Bytes(view.begin(), view.end());
}

}  // namespace

TEST_CASE("libsrtp's reference packet: the key and salt are laid out as libsrtp and peers expect") {
  auto s = session(reference_keys());
  Bytes packet = kRtpPlain;
  REQUIRE(s->protect_rtp(packet).ok());
  CHECK(packet == kSrtp);
  Bytes control = kRtcpPlain;
  REQUIRE(s->protect_rtcp(control).ok());
  CHECK(control == kSrtcp);
  auto back = unprotect(*s, kSrtp);
  REQUIRE(back.ok());
  CHECK(*back == kRtpPlain);
  auto back_rtcp = unprotect(*s, kSrtcp, true);
  REQUIRE(back_rtcp.ok());
  CHECK(*back_rtcp == kRtcpPlain);
}

TEST_CASE("SRTP with the keys of a DTLS handshake, both profiles: byte-exact both ways, replay and tampering refused") {
  for (const char* profiles : {"SRTP_AEAD_AES_128_GCM", "SRTP_AES128_CM_SHA1_80"}) {
    CAPTURE(profiles);
    const HandshakeKeys k = handshake(profiles);
    const size_t tag = k.server.profile == SrtpProfile::AeadAes128Gcm ? 16 : 10;
    CHECK(srtp_profile_name(k.server.profile) == profiles);
    auto browser = session(k.client);
    auto sluice = session(k.server);

    // RTP, Sluice to the browser and back, several SSRCs on one session.
    for (uint16_t seq = 65530; seq != 6; ++seq) {
      const Bytes plain = rtp(seq, seq % 2 ? 0x11111111 : 0x22222222, 1100, static_cast<uint8_t>(seq));
      Bytes wire = plain;
      wire.reserve(wire.size() + SrtpSession::kMaxOverhead);
      REQUIRE(sluice->protect_rtp(wire).ok());
      CHECK(wire.size() == plain.size() + tag);
      CHECK(!std::equal(plain.begin() + 12, plain.end(), wire.begin() + 12));  // encrypted
      auto got = unprotect(*browser, wire);
      REQUIRE_MESSAGE(got.ok(), got.error().message());
      CHECK(*got == plain);
    }
    Bytes up = rtp(1, 0xABCDEF01, 200, 7);
    const Bytes up_plain = up;
    REQUIRE(browser->protect_rtp(up).ok());
    auto got = unprotect(*sluice, up);
    REQUIRE(got.ok());
    CHECK(*got == up_plain);

    // Replayed: refused by name.
    auto again = unprotect(*sluice, up);
    REQUIRE_FALSE(again.ok());
    CHECK(again.error().code == Errc::Rejected);
    CHECK(again.error().context.starts_with("replay_fail"));

    // One bit flipped anywhere: authentication fails.
    for (size_t at : {size_t{1}, size_t{12}, up.size() / 2, up.size() - 1}) {
      Bytes next = rtp(static_cast<uint16_t>(2 + at), 0xABCDEF01, 200, 7);
      REQUIRE(browser->protect_rtp(next).ok());
      next[at] ^= 0x04;
      auto bad = unprotect(*sluice, next);
      REQUIRE_FALSE(bad.ok());
      CHECK(bad.error().context.starts_with("auth_fail"));
    }

    // RTCP both ways, and its replay.
    Bytes report = rtcp(0xABCDEF01);
    const Bytes report_plain = report;
    REQUIRE(browser->protect_rtcp(report).ok());
    CHECK(report.size() == report_plain.size() + 4 + tag);
    auto r = unprotect(*sluice, report, true);
    REQUIRE(r.ok());
    CHECK(*r == report_plain);
    CHECK_FALSE(unprotect(*sluice, report, true).ok());
    Bytes sr = rtcp(0x11111111);
    sr[1] = 200;
    const Bytes sr_plain = sr;
    REQUIRE(sluice->protect_rtcp(sr).ok());
    auto s = unprotect(*browser, sr, true);
    REQUIRE(s.ok());
    CHECK(*s == sr_plain);

    // Keys of the wrong direction never authenticate.
    auto confused = session(k.server);
    Bytes mine = rtp(9, 0x11111111, 50, 1);
    REQUIRE(sluice->protect_rtp(mine).ok());
    CHECK_FALSE(unprotect(*confused, mine).ok());
  }
}

TEST_CASE("a packet resent for a NACK: protected twice, the same bytes both times") {
  const HandshakeKeys k = handshake();
  auto browser = session(k.client);
  auto sluice = session(k.server);
  const Bytes plain = rtp(500, 0x11111111, 900, 0x5A);
  Bytes first = plain, second = plain;
  REQUIRE(sluice->protect_rtp(first).ok());
  Bytes between = rtp(501, 0x11111111, 900, 0x5B);  // later packets went out meanwhile
  REQUIRE(sluice->protect_rtp(between).ok());
  REQUIRE(sluice->protect_rtp(second).ok());
  CHECK(first == second);  // the same packet: the same bytes on the wire
  // The browser lost the first one: the resent one is taken once, then it is a replay.
  auto got = unprotect(*browser, second);
  REQUIRE(got.ok());
  CHECK(*got == plain);
  CHECK_FALSE(unprotect(*browser, first).ok());
}

TEST_CASE("the replay window: an old packet inside it is taken once, one behind it is refused") {
  const HandshakeKeys k = handshake();
  auto browser = session(k.client);
  auto sluice = session(k.server, SrtpOptions{64});
  std::vector<Bytes> sent;
  for (uint16_t seq = 0; seq < 200; ++seq) {
    Bytes p = rtp(seq, 0x33333333, 20, 1);
    REQUIRE(browser->protect_rtp(p).ok());
    sent.push_back(std::move(p));
  }
  for (size_t i = 0; i < sent.size(); i += 2) REQUIRE(unprotect(*sluice, sent[i]).ok());
  CHECK(unprotect(*sluice, sent[199]).ok());  // late by one: inside the window
  CHECK(unprotect(*sluice, sent[151]).ok());  // 48 behind: inside
  auto old = unprotect(*sluice, sent[101]);   // 98 behind a window of 64
  REQUIRE_FALSE(old.ok());
  CHECK(old.error().context.starts_with("replay_old"));
}

TEST_CASE("what cannot be SRTP is refused before libsrtp sees it") {
  auto s = session(reference_keys());
  Bytes tiny = {0x80, 0x60, 0, 1};
  CHECK(s->protect_rtp(tiny).error().code == Errc::Malformed);
  CHECK(tiny.size() == 4);
  Bytes buffer(40);
  CHECK_FALSE(s->protect_rtp(std::span(buffer), 30).ok());  // no room for the tag
  std::span<uint8_t> view(buffer.data(), 5);
  CHECK_FALSE(s->unprotect_rtcp(view).ok());
  SrtpKeys wrong = reference_keys();
  wrong.profile = SrtpProfile::AeadAes128Gcm;  // 28 bytes, not 30
  CHECK_FALSE(SrtpSession::create(wrong).ok());
}
