// The SRTP profiles DTLS may select and the master keys its handshake exports for them
// (docs/webrtc-protocol.md, "DTLS and SRTP"). Shared by the DTLS transport, which fills them, and
// the SRTP code of both directions, which uses them.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace sluice::server {

// The profiles use_srtp may select (RFC 5764 4.1.2, RFC 7714 14.2), by their ids.
enum class SrtpProfile : uint16_t {
  Aes128CmSha1_80 = 0x0001,  // AES-128 counter mode, HMAC-SHA1 with an 80-bit tag
  AeadAes128Gcm = 0x0007,    // AES-128-GCM with a 128-bit tag
};

std::string_view srtp_profile_name(SrtpProfile p);  // "SRTP_AEAD_AES_128_GCM" ...
size_t srtp_key_length(SrtpProfile p);              // master key: 16 for both
size_t srtp_salt_length(SrtpProfile p);             // master salt: 14 (CM) or 12 (GCM)
size_t srtp_tag_length(SrtpProfile p);              // on each packet: 10 (CM) or 16 (GCM)

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

}  // namespace sluice::server
