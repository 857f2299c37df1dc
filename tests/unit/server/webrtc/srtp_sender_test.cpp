// server/webrtc/srtp_sender.hpp against libsrtp2's own sender (an outbound context with
// allow_repeat_tx, as Sluice used until it protected on OpenSSL): for both profiles, the same
// packets come out byte for byte. The packets cross a sequence number wrap (the rollover counter
// in the IV and, for AES-CM, in the tag), start above half the sequence space, carry CSRCs and a
// header extension (authenticated, not encrypted), repeat (NACK answers), arrive late and come on
// several SSRCs; SRTCP's index counts per SSRC. A resend more than the window behind and a header
// that overruns the packet are refused, leaving the packet as it was.
#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include "server/webrtc/srtp_sender.hpp"
#include "server/webrtc/srtp_session.hpp"
#include "tests/unit/server/webrtc/libsrtp_sender.hpp"

using namespace sluice;
using namespace sluice::server;

namespace {

using Bytes = std::vector<uint8_t>;

// libsrtp's own sender with the same master key and salt.
struct Reference {
  test::LibsrtpSender sender;
  Reference(SrtpProfile profile, const Bytes& key_salt) : sender(profile, key_salt) { REQUIRE(sender.ok()); }
  Bytes protect(const Bytes& p, bool rtcp) {
    auto out = sender.protect(p, rtcp);
    REQUIRE(out.has_value());
    return *out;
  }
};

Result<Bytes> protect(SrtpSender& s, Bytes p, bool rtcp) {
  const size_t plain = p.size();
  p.resize(plain + SrtpSender::kMaxOverhead);
  auto r = rtcp ? s.protect_rtcp(std::span(p), plain) : s.protect_rtp(std::span(p), plain);
  if (!r) return std::move(r).error();
  p.resize(*r);
  return p;
}

Bytes rtp(uint16_t seq, uint32_t ssrc, size_t payload, std::mt19937& rng, uint8_t csrcs = 0, bool extension = false) {
  Bytes p = {static_cast<uint8_t>(0x80 | (extension ? 0x10 : 0) | csrcs),
             static_cast<uint8_t>(96 | (seq % 7 == 0 ? 0x80 : 0)),
             static_cast<uint8_t>(seq >> 8),
             static_cast<uint8_t>(seq),
             0x01,
             0x02,
             0x03,
             static_cast<uint8_t>(seq),
             static_cast<uint8_t>(ssrc >> 24),
             static_cast<uint8_t>(ssrc >> 16),
             static_cast<uint8_t>(ssrc >> 8),
             static_cast<uint8_t>(ssrc)};
  for (uint8_t i = 0; i < csrcs * 4; ++i) p.push_back(static_cast<uint8_t>(0xC0 + i));
  if (extension) {
    const Bytes ext = {0xBE, 0xDE, 0x00, 0x02, 0x10, 0xAA, 0x21, 0xBB, 0xCC, 0x00, 0x00, 0x00};
    p.insert(p.end(), ext.begin(), ext.end());
  }
  for (size_t i = 0; i < payload; ++i) p.push_back(static_cast<uint8_t>(rng()));
  return p;
}

Bytes rtcp(uint32_t ssrc, size_t length, std::mt19937& rng) {
  Bytes p = {0x80,
             200,
             0,
             static_cast<uint8_t>(length / 4 - 1),
             static_cast<uint8_t>(ssrc >> 24),
             static_cast<uint8_t>(ssrc >> 16),
             static_cast<uint8_t>(ssrc >> 8),
             static_cast<uint8_t>(ssrc)};
  while (p.size() < length) p.push_back(static_cast<uint8_t>(rng()));
  return p;
}

Bytes key_salt(SrtpProfile profile, std::mt19937& rng) {
  Bytes k(srtp_key_length(profile) + srtp_salt_length(profile));
  for (auto& b : k) b = static_cast<uint8_t>(rng());
  return k;
}

}  // namespace

TEST_CASE("SRTP and SRTCP on OpenSSL come out as libsrtp's sender makes them, both profiles") {
  for (const SrtpProfile profile : {SrtpProfile::AeadAes128Gcm, SrtpProfile::Aes128CmSha1_80}) {
    for (const uint16_t first : {uint16_t{65000}, uint16_t{40000}, uint16_t{0}, uint16_t{33000}}) {
      CAPTURE(srtp_profile_name(profile));
      CAPTURE(first);
      std::mt19937 rng(first + static_cast<uint32_t>(profile));
      const Bytes keys = key_salt(profile, rng);
      Reference libsrtp(profile, keys);
      auto ours = SrtpSender::create(profile, keys);
      REQUIRE(ours.ok());
      std::vector<uint16_t> sent;
      for (int i = 0; i < 3000; ++i) {
        const uint32_t ssrc = i % 3 == 0 ? 0xA0A0A0A0 : 0x0B0B0B0B;
        uint16_t seq = static_cast<uint16_t>(first + i);
        if (i % 50 == 49) seq = sent[sent.size() - 1 - rng() % 40];  // a NACK answer (maybe the other SSRC's)
        if (i % 97 == 96) seq = static_cast<uint16_t>(seq + 5);      // a gap, filled later
        sent.push_back(seq);
        const Bytes plain = rtp(seq, ssrc, 1 + rng() % 1200, rng, static_cast<uint8_t>(i % 5 == 0 ? 2 : 0), i % 4 == 0);
        auto got = protect(**ours, plain, false);
        REQUIRE_MESSAGE(got.ok(), got.error().message());
        REQUIRE(*got == libsrtp.protect(plain, false));
        if (i % 100 == 0) {
          const Bytes report = rtcp(ssrc, 28 + 4 * (rng() % 10), rng);
          auto control = protect(**ours, report, true);
          REQUIRE(control.ok());
          REQUIRE(*control == libsrtp.protect(report, true));
        }
      }
    }
  }
}

TEST_CASE("what libsrtp would refuse to send is refused, and the packet is left as it was") {
  std::mt19937 rng(7);
  const Bytes keys = key_salt(SrtpProfile::AeadAes128Gcm, rng);
  auto ours = SrtpSender::create(SrtpProfile::AeadAes128Gcm, keys);
  REQUIRE(ours.ok());
  for (uint16_t seq = 40000; seq < 42000; ++seq) REQUIRE(protect(**ours, rtp(seq, 1, 100, rng), false).ok());
  CHECK(protect(**ours, rtp(41999 - 1023, 1, 100, rng), false).ok());  // inside the window
  auto old = protect(**ours, rtp(41999 - 1024, 1, 100, rng), false);
  REQUIRE_FALSE(old.ok());
  CHECK(old.error().code == Errc::Rejected);
  CHECK(old.error().context.starts_with("replay_old"));

  Bytes overrun = rtp(1, 2, 4, rng, 0, true);  // the extension says 8 bytes follow its header
  overrun.resize(12 + 4 + 4);
  const Bytes before = overrun;
  Bytes buffer = overrun;
  buffer.resize(overrun.size() + SrtpSender::kMaxOverhead);
  auto bad = (*ours)->protect_rtp(std::span(buffer), overrun.size());
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().context.starts_with("parse_err"));
  CHECK(std::equal(before.begin(), before.end(), buffer.begin()));
  // A header extension of 2040 bytes: 12 + 4 + 2040 = 2056 bytes of header, over libsrtp's 2048
  // for GCM's additional data (found by the srtp_unprotect fuzz target against libsrtp).
  Bytes long_header = rtp(42000, 1, 0, rng, 0, true);
  long_header[14] = 0x01;
  long_header[15] = 0xFE;  // 510 words
  long_header.resize(12 + 4 + 2040 + 100, 0x55);
  auto too_long = protect(**ours, long_header, false);
  REQUIRE_FALSE(too_long.ok());
  CHECK(too_long.error().context.starts_with("cipher_fail"));
  long_header[15] = 0xFC;  // 508 words: 2048 bytes of header, taken
  CHECK(protect(**ours, long_header, false).ok());
  Bytes many_csrcs = rtp(2, 2, 4, rng, 15);
  many_csrcs.resize(30);
  CHECK_FALSE(protect(**ours, many_csrcs, false).ok());

  for (uint32_t ssrc = 100; ssrc < 100 + SrtpSender::kMaxSsrcs - 1; ++ssrc) {  // SSRC 1 is the first
    CHECK(protect(**ours, rtp(1, ssrc, 10, rng), false).ok());
  }
  auto extra = protect(**ours, rtp(1, 999, 10, rng), false);
  REQUIRE_FALSE(extra.ok());
  CHECK(extra.error().context.starts_with("ssrc_limit"));

  CHECK_FALSE(SrtpSender::create(SrtpProfile::Aes128CmSha1_80, keys).ok());  // 28 bytes, not 30
}
