#include "server/webrtc/srtp_keys.hpp"

#include <openssl/crypto.h>

namespace sluice::server {

std::string_view srtp_profile_name(SrtpProfile p) {
  return p == SrtpProfile::AeadAes128Gcm ? "SRTP_AEAD_AES_128_GCM" : "SRTP_AES128_CM_SHA1_80";
}

size_t srtp_key_length(SrtpProfile) { return 16; }

size_t srtp_salt_length(SrtpProfile p) { return p == SrtpProfile::AeadAes128Gcm ? 12 : 14; }

size_t srtp_tag_length(SrtpProfile p) { return p == SrtpProfile::AeadAes128Gcm ? 16 : 10; }

SrtpKeys::~SrtpKeys() {
  OPENSSL_cleanse(local.data(), local.size());
  OPENSSL_cleanse(remote.data(), remote.size());
}

}  // namespace sluice::server
