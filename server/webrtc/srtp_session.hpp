// SrtpSession: SRTP and SRTCP for one WebRTC session, with the keys its DTLS handshake exported
// (server/webrtc/dtls_transport.hpp; docs/webrtc-protocol.md, "DTLS and SRTP").
//
//  1. What we send (RTP and RTCP of any of our SSRCs) is protected with our key by SrtpSender
//     (server/webrtc/srtp_sender.hpp: OpenSSL, the bytes libsrtp would make); what the peer sends
//     (any of its SSRCs) is checked and decrypted with the peer's key by a libsrtp2 context, which
//     keeps a stream per SSRC, made on the first packet that authenticates (a packet that does
//     not makes nothing).
//  2. Inbound, libsrtp refuses a packet it has seen ("replay_fail") or one older than the replay
//     window ("replay_old"): replay_window packets of RTP; SRTCP's window is libsrtp's own 128.
//  3. Outbound, the same sequence number may be protected twice: a packet resent for a NACK from
//     the retransmission history keeps its sequence number when it is not sent as rtx.
//  4. Buffers belong to the caller; protection grows a packet by at most kMaxOverhead bytes,
//     unprotection shrinks it. Errors carry libsrtp's status names ("auth_fail", "replay_fail").
//  5. srtp_init() runs once per process, on the first session (thread-safe). Not thread-safe
//     itself: one session belongs to one loop.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "base/result.hpp"
#include "server/webrtc/srtp_keys.hpp"
#include "server/webrtc/srtp_sender.hpp"

typedef struct srtp_ctx_t_ srtp_ctx_t;

namespace sluice::server {

struct SrtpOptions {
  unsigned long replay_window = 1024;  // inbound RTP packets remembered (libsrtp: 64..32767)
};

class SrtpSession {
 public:
  // Errc::Config with libsrtp's status name when it refuses the keys or the policy.
  static Result<std::unique_ptr<SrtpSession>> create(const SrtpKeys& keys, const SrtpOptions& options = {});
  // Loads libsrtp (srtp_init and the NSS modules behind it: 0.3 s and more) once per process. A
  // service calls it at start, so the first session's handshake does not stall its loop.
  static Result<void> init_library();
  ~SrtpSession();
  SrtpSession(const SrtpSession&) = delete;
  SrtpSession& operator=(const SrtpSession&) = delete;

  // The most protection adds: SRTCP's 4-byte index and a 16-byte tag (no MKI is used).
  static constexpr size_t kMaxOverhead = SrtpSender::kMaxOverhead;

  // In place: `packet` is an RTP (RTCP) packet; it grows by the tag (and SRTCP's index). Capacity
  // is reserved here when the caller did not leave kMaxOverhead.
  Result<void> protect_rtp(std::vector<uint8_t>& packet);
  Result<void> protect_rtcp(std::vector<uint8_t>& packet);
  // In place in a buffer the caller owns: the packet is buffer[0, length); buffer must be at least
  // length + kMaxOverhead long. Returns the protected length.
  Result<size_t> protect_rtp(std::span<uint8_t> buffer, size_t length);
  Result<size_t> protect_rtcp(std::span<uint8_t> buffer, size_t length);
  // In place: `packet` becomes the plain RTP (RTCP) packet, shorter. Errc::Rejected with
  // "auth_fail", "replay_fail", "replay_old"; Errc::Malformed for what cannot be SRTP.
  Result<void> unprotect_rtp(std::span<uint8_t>& packet);
  Result<void> unprotect_rtcp(std::span<uint8_t>& packet);

  SrtpProfile profile() const { return profile_; }

 private:
  SrtpSession() = default;

  srtp_ctx_t* inbound_ = nullptr;
  std::unique_ptr<SrtpSender> outbound_;
  SrtpProfile profile_ = SrtpProfile::Aes128CmSha1_80;
};

// libsrtp's name for a status code ("ok", "auth_fail", "replay_fail", ...).
std::string_view srtp_status_name(int status);

}  // namespace sluice::server
