// SrtpSender: SRTP and SRTCP protection of what Sluice sends (RFC 3711, RFC 7714), on OpenSSL
// (AES-CTR, HMAC-SHA1) and server/io/record_cipher.hpp (AES-GCM: intel-ipsec-mb where the build
// has it, else OpenSSL) instead of libsrtp: Debian's libsrtp2 runs its ciphers on NSS, which was a
// quarter of a WHEP server's CPU at 200 players (docs/webrtc-protocol.md, "SRTP sessions"). The
// bytes on the wire are libsrtp's, which is what receivers (libsrtp in browsers) check:
//
//  1. Session keys come from the master key and salt by the AES-CM PRF (RFC 3711 4.3.1, key
//     derivation rate 0), labels 0-2 for RTP and 3-5 for RTCP; GCM's 12-byte master salt is
//     padded with zeros to the PRF's 14, as libsrtp pads it.
//  2. The RTP packet index (rollover counter and sequence number) is guessed per SSRC as libsrtp's
//     own sender guesses it (its replay database's estimate), so a receiver agrees across a wrap.
//  3. A sequence number may be protected again: a NACK answered from the history resends the same
//     bytes under the same index, which reveals nothing. One more than kWindow packets behind the
//     newest is refused ("replay_old"), as libsrtp refuses it; receivers would too.
//  4. SRTCP's index counts from 1 per SSRC, with the E bit (encrypted) set.
//  5. Sizes: the caller's buffer holds the packet and at least kMaxOverhead more. With GCM an RTP
//     header (CSRCs and extension: the additional data) over 2048 bytes is refused, as libsrtp on
//     NSS refuses it ("cipher_fail"); Sluice's own headers are 12 bytes.
// One sender belongs to one session, on one loop.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "base/result.hpp"
#include "server/webrtc/srtp_keys.hpp"

namespace sluice::server {

class SrtpSender {
 public:
  static constexpr size_t kWindow = 1024;         // how far behind the newest a resend may be
  static constexpr size_t kMaxOverhead = 4 + 16;  // SRTCP's index and the longest tag
  static constexpr size_t kMaxSsrcs = 16;         // ours: video, audio, rtx and some to spare

  // Errc::Config when the key and salt are not the profile's length or OpenSSL fails.
  static Result<std::unique_ptr<SrtpSender>> create(SrtpProfile profile, std::span<const uint8_t> key_salt);
  ~SrtpSender();
  SrtpSender(const SrtpSender&) = delete;
  SrtpSender& operator=(const SrtpSender&) = delete;

  // In place: the packet is buffer[0, length), buffer.size() >= length + kMaxOverhead. Returns the
  // protected length. Errc::Malformed ("parse_err") for what is not RTP (RTCP); Errc::Rejected
  // ("replay_old", "ssrc_limit", "key_expired"). A refused packet is left as it was.
  Result<size_t> protect_rtp(std::span<uint8_t> buffer, size_t length);
  Result<size_t> protect_rtcp(std::span<uint8_t> buffer, size_t length);

 private:
  struct Direction;  // the session keys of RTP or of RTCP
  struct Stream {
    uint32_t ssrc = 0;
    uint64_t rtp_index = 0;   // the newest packet index protected (48 bits)
    uint32_t rtcp_index = 0;  // the last SRTCP index used (31 bits)
  };

  SrtpSender();
  Stream* stream(uint32_t ssrc);

  SrtpProfile profile_ = SrtpProfile::Aes128CmSha1_80;
  std::unique_ptr<Direction> rtp_, rtcp_;
  std::vector<Stream> streams_;
};

}  // namespace sluice::server
