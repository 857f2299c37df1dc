// SrtpSession: SRTP and SRTCP for one WebRTC session, by libsrtp2, with the keys its DTLS handshake
// exported (server/webrtc/dtls_transport.hpp; docs/webrtc-protocol.md, "DTLS and SRTP").
//
//  1. Two libsrtp contexts: the outbound one protects what we send (RTP and RTCP of any of our
//     SSRCs) with our key, the inbound one checks and decrypts what the peer sends (any of its
//     SSRCs) with the peer's key. libsrtp keeps a stream per SSRC, made on the first packet that
//     authenticates (an inbound packet that does not makes nothing).
//  2. Inbound, libsrtp refuses a packet it has seen ("replay_fail") or one older than the replay
//     window ("replay_old"): kReplayWindow packets of RTP; SRTCP's window is libsrtp's own 128.
//  3. Outbound, the same sequence number may be protected twice (allow_repeat_tx): a packet resent
//     for a NACK from the retransmission history keeps its sequence number when it is not sent
//     as rtx, and libsrtp would otherwise refuse it as a replay of our own.
//  4. Buffers belong to the caller; protection grows a packet by at most kMaxOverhead bytes,
//     unprotection shrinks it. Errors carry libsrtp's status name ("auth_fail", "replay_fail").
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

typedef struct srtp_ctx_t_ srtp_ctx_t;

namespace sluice::server {

// The profiles use_srtp may select (RFC 5764 4.1.2, RFC 7714 14.2), by their ids.
enum class SrtpProfile : uint16_t {
  Aes128CmSha1_80 = 0x0001,  // AES-128 counter mode, HMAC-SHA1 with an 80-bit tag
  AeadAes128Gcm = 0x0007,    // AES-128-GCM with a 128-bit tag
};

std::string_view srtp_profile_name(SrtpProfile p);  // "SRTP_AEAD_AES_128_GCM" ...
size_t srtp_key_length(SrtpProfile p);              // master key: 16 for both
size_t srtp_salt_length(SrtpProfile p);             // master salt: 14 (CM) or 12 (GCM)

// The master keys of both directions, each as libsrtp takes it: the key, then the salt.
struct SrtpKeys {
  static constexpr size_t kMaxKeySalt = 16 + 14;
  SrtpProfile profile = SrtpProfile::Aes128CmSha1_80;
  size_t size = 0;                            // bytes used in local and remote
  std::array<uint8_t, kMaxKeySalt> local{};   // ours: protects what we send
  std::array<uint8_t, kMaxKeySalt> remote{};  // the peer's: checks what it sends

  SrtpKeys() = default;
  SrtpKeys(const SrtpKeys&) = default;
  SrtpKeys& operator=(const SrtpKeys&) = default;
  ~SrtpKeys();  // wipes the keys
  std::span<const uint8_t> local_key() const { return {local.data(), size}; }
  std::span<const uint8_t> remote_key() const { return {remote.data(), size}; }
};

struct SrtpOptions {
  unsigned long replay_window = 1024;  // inbound RTP packets remembered (libsrtp: 64..32767)
  bool allow_repeat_tx = true;         // outbound: protect a sequence number again (NACK answers)
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
  static constexpr size_t kMaxOverhead = 4 + 16;

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
  srtp_ctx_t* outbound_ = nullptr;
  SrtpProfile profile_ = SrtpProfile::Aes128CmSha1_80;
};

// libsrtp's name for a status code ("ok", "auth_fail", "replay_fail", ...).
std::string_view srtp_status_name(int status);

}  // namespace sluice::server
