// libFuzzer target for SRTP (server/webrtc/srtp_session.hpp, libsrtp2 underneath): the first byte
// picks the profile (bit 0: AEAD_AES_128_GCM, else AES128_CM_SHA1_80), then operations on one
// session pair, each an operation byte and a 2-byte big-endian length before its packet:
//   0: unprotect as SRTP, 1: unprotect as SRTCP (what a peer sends us),
//   2: protect as RTP, 3: protect as RTCP (what we send), checked by the peer's session.
// Both sessions use libsrtp's reference master key (the one tests/unit/server/webrtc/
// srtp_session_test.cpp checks), so the seeds can carry real protected packets: its reference
// SRTP and SRTCP packets, ffmpeg's RTP and a browser's RTCP from corpus/rtp_depacketizer and
// corpus/rtcp.
// Properties: no crash or sanitizer report; an unprotected packet is shorter than it came, by at
// least the tag; a protected packet is longer by the tag (and SRTCP's index), at most
// kMaxOverhead, and the peer's session gives back the same bytes; a failed operation leaves the
// packet as it was (protect) or in bounds (unprotect). And differentially: what Sluice protects
// (server/webrtc/srtp_sender.hpp, on OpenSSL) is what libsrtp's own sender makes of the same
// packet, byte for byte, and each refuses what the other refuses (but for the sender's limit of
// SSRCs, which libsrtp does not have).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "server/webrtc/srtp_sender.hpp"
#include "server/webrtc/srtp_session.hpp"
#include "tests/fuzz/fuzz_input.hpp"
#include "tests/unit/server/webrtc/libsrtp_sender.hpp"

using namespace sluice;
using namespace sluice::server;

namespace {

constexpr uint8_t kMasterKeySalt[30] = {0xe1, 0xf9, 0x7a, 0x0d, 0x3e, 0x01, 0x8b, 0xe0, 0xd6, 0x4f,
                                        0xa3, 0x2c, 0x06, 0xde, 0x41, 0x39, 0x0e, 0xc6, 0x75, 0xad,
                                        0x49, 0x8a, 0xfe, 0xeb, 0xb6, 0x96, 0x0b, 0x3a, 0xab, 0xe6};
constexpr int kMaxOperations = 64;

std::unique_ptr<SrtpSession> session(SrtpProfile profile) {
  SrtpKeys k;
  k.profile = profile;
  k.size = srtp_key_length(profile) + srtp_salt_length(profile);
  std::copy(kMasterKeySalt, kMasterKeySalt + k.size, k.local.begin());
  std::copy(kMasterKeySalt, kMasterKeySalt + k.size, k.remote.begin());
  auto s = SrtpSession::create(k);
  FUZZ_CHECK(s.ok());
  return std::move(s).value();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::FuzzInput in{std::span(data, size)};
  const SrtpProfile profile = (in.be(1) & 1) ? SrtpProfile::AeadAes128Gcm : SrtpProfile::Aes128CmSha1_80;
  const size_t tag = profile == SrtpProfile::AeadAes128Gcm ? 16 : 10;
  // Same keys both ways: `ours` protects what `peer` unprotects, and the other way round.
  auto ours = session(profile);
  auto peer = session(profile);
  test::LibsrtpSender reference(profile,
                                std::span(kMasterKeySalt, srtp_key_length(profile) + srtp_salt_length(profile)));
  FUZZ_CHECK(reference.ok());
  for (int i = 0; i < kMaxOperations && in.left() >= 3; ++i) {
    const auto op = static_cast<uint8_t>(in.be(1) & 3);
    const auto bytes = in.bytes(static_cast<size_t>(in.be(2)));
    std::vector<uint8_t> packet(bytes.begin(), bytes.end());
    if (op < 2) {
      std::span<uint8_t> view(packet);
      const auto r = op == 0 ? ours->unprotect_rtp(view) : ours->unprotect_rtcp(view);
      FUZZ_CHECK(view.data() == packet.data() && view.size() <= packet.size());
      if (r.ok()) FUZZ_CHECK(view.size() + tag <= packet.size());
      continue;
    }
    const std::vector<uint8_t> plain = packet;
    const auto r = op == 2 ? ours->protect_rtp(packet) : ours->protect_rtcp(packet);
    const auto expected = reference.protect(plain, op == 3);
    if (!r.ok()) {
      FUZZ_CHECK(packet == plain);
      FUZZ_CHECK(!expected || r.error().context.starts_with("ssrc_limit"));
      continue;
    }
    FUZZ_CHECK(expected && *expected == packet);
    FUZZ_CHECK(packet.size() >= plain.size() + tag && packet.size() <= plain.size() + SrtpSession::kMaxOverhead);
    std::span<uint8_t> view(packet);
    const auto back = op == 2 ? peer->unprotect_rtp(view) : peer->unprotect_rtcp(view);
    // The peer may refuse a replay (the same sequence number protected again with
    // allow_repeat_tx) or a packet too old for its window; anything it takes is the original.
    if (back.ok()) FUZZ_CHECK(std::equal(view.begin(), view.end(), plain.begin(), plain.end()));
  }
  return 0;
}
