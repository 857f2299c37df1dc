#include "server/webrtc/srtp_sender.hpp"

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <cstring>

#include "server/io/record_cipher.hpp"

namespace sluice::server {

namespace {

constexpr size_t kMasterKey = 16;
constexpr size_t kPrfSalt = 14;             // the PRF's and AES-CM's salt; GCM uses the first 12 bytes
constexpr size_t kAuthKey = 20;             // HMAC-SHA1's session key (RFC 3711 8.2)
constexpr uint16_t kTlsAes128Gcm = 0x1301;  // RecordCipher's name for AES-128-GCM
// libsrtp on NSS (Debian's, GStreamer's) takes at most 2048 bytes of GCM additional data, the RTP
// header: a receiver like it could not check a packet with a longer one (found by fuzzing).
constexpr size_t kMaxGcmHeader = 2048;

uint32_t be32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

void xor_be(uint8_t* p, uint64_t value, size_t bytes) {
  for (size_t i = 0; i < bytes; ++i) p[bytes - 1 - i] ^= static_cast<uint8_t>(value >> (8 * i));
}

// RFC 3711 4.3.1 with a key derivation rate of 0: the AES-CM key stream of the master key at
// IV = (master salt XOR label << 48) * 2^16.
bool derive(std::span<const uint8_t> master_key, const std::array<uint8_t, kPrfSalt>& master_salt, uint8_t label,
            uint8_t* out, size_t length) {
  uint8_t iv[16] = {};
  std::memcpy(iv, master_salt.data(), kPrfSalt);
  iv[7] ^= label;
  std::memset(out, 0, length);
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  int n = 0;
  const bool ok = ctx && EVP_EncryptInit_ex(ctx, EVP_aes_128_ctr(), nullptr, master_key.data(), iv) == 1 &&
                  EVP_EncryptUpdate(ctx, out, &n, out, static_cast<int>(length)) == 1;
  EVP_CIPHER_CTX_free(ctx);
  return ok;
}

Error refused(Errc code, const char* status, const char* what) {
  return Error(code, std::string(status) + " (" + what + ")");
}

}  // namespace

// The session keys of one of RTP and RTCP: GCM's cipher, or AES-CTR's and HMAC-SHA1's contexts.
struct SrtpSender::Direction {
  std::unique_ptr<RecordCipher> gcm;
  EVP_CIPHER_CTX* ctr = nullptr;
  EVP_MAC* mac = nullptr;
  EVP_MAC_CTX* hmac = nullptr;
  std::array<uint8_t, 16> salt{};  // the session salt, zero-padded

  ~Direction() {
    EVP_MAC_CTX_free(hmac);
    EVP_MAC_free(mac);
    EVP_CIPHER_CTX_free(ctr);
    OPENSSL_cleanse(salt.data(), salt.size());
  }

  // Labels: key, key + 1 the authentication key, key + 2 the salt.
  bool init(SrtpProfile profile, std::span<const uint8_t> master_key, const std::array<uint8_t, kPrfSalt>& master_salt,
            uint8_t label) {
    uint8_t key[kMasterKey], auth[kAuthKey];
    const bool gcm_profile = profile == SrtpProfile::AeadAes128Gcm;
    bool ok = derive(master_key, master_salt, label, key, sizeof key) &&
              derive(master_key, master_salt, static_cast<uint8_t>(label + 2), salt.data(), srtp_salt_length(profile));
    if (ok && gcm_profile) {
      gcm = RecordCipher::make(kTlsAes128Gcm, std::span<const uint8_t>(key, sizeof key));
      ok = gcm != nullptr;
    } else if (ok) {
      OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, const_cast<char*>("SHA1"), 0),
                             OSSL_PARAM_construct_end()};
      ctr = EVP_CIPHER_CTX_new();
      mac = EVP_MAC_fetch(nullptr, "HMAC", nullptr);
      hmac = mac ? EVP_MAC_CTX_new(mac) : nullptr;
      ok = ctr && hmac && EVP_EncryptInit_ex(ctr, EVP_aes_128_ctr(), nullptr, key, nullptr) == 1 &&
           derive(master_key, master_salt, static_cast<uint8_t>(label + 1), auth, sizeof auth) &&
           EVP_MAC_init(hmac, auth, sizeof auth, params) == 1;
    }
    OPENSSL_cleanse(key, sizeof key);
    OPENSSL_cleanse(auth, sizeof auth);
    return ok;
  }

  // AES-CM: the key stream at `iv` (the salt already applied) over data, in place.
  bool encrypt_ctr(const uint8_t* iv, uint8_t* data, size_t length) {
    int n = 0;
    return EVP_EncryptInit_ex(ctr, nullptr, nullptr, nullptr, iv) == 1 &&
           EVP_EncryptUpdate(ctr, data, &n, data, static_cast<int>(length)) == 1;
  }

  // HMAC-SHA1 of data then `extra`, cut to `tag_length` bytes at `tag`. The key set at init is
  // reused: init with no key only resets the running hash.
  bool authenticate(const uint8_t* data, size_t length, std::span<const uint8_t> extra, uint8_t* tag,
                    size_t tag_length) {
    uint8_t full[EVP_MAX_MD_SIZE];
    size_t n = 0;
    const bool ok = EVP_MAC_init(hmac, nullptr, 0, nullptr) == 1 && EVP_MAC_update(hmac, data, length) == 1 &&
                    (extra.empty() || EVP_MAC_update(hmac, extra.data(), extra.size()) == 1) &&
                    EVP_MAC_final(hmac, full, &n, sizeof full) == 1 && n >= tag_length;
    if (ok) std::memcpy(tag, full, tag_length);
    return ok;
  }
};

SrtpSender::SrtpSender() = default;
SrtpSender::~SrtpSender() = default;

Result<std::unique_ptr<SrtpSender>> SrtpSender::create(SrtpProfile profile, std::span<const uint8_t> key_salt) {
  const size_t salt_length = srtp_salt_length(profile);
  if (key_salt.size() != kMasterKey + salt_length) {
    return Error(Errc::Config, "SRTP: " + std::string(srtp_profile_name(profile)) + " needs " +
                                   std::to_string(kMasterKey + salt_length) + " bytes of key and salt, not " +
                                   std::to_string(key_salt.size()));
  }
  std::array<uint8_t, kPrfSalt> master_salt{};  // GCM's 12 bytes padded with zeros
  std::memcpy(master_salt.data(), key_salt.data() + kMasterKey, salt_length);
  const auto master_key = key_salt.first(kMasterKey);
  std::unique_ptr<SrtpSender> out(new SrtpSender());
  out->profile_ = profile;
  out->rtp_ = std::make_unique<Direction>();
  out->rtcp_ = std::make_unique<Direction>();
  const bool ok =
      out->rtp_->init(profile, master_key, master_salt, 0) && out->rtcp_->init(profile, master_key, master_salt, 3);
  OPENSSL_cleanse(master_salt.data(), master_salt.size());
  if (!ok) return Error(Errc::Config, "SRTP: the sender's session keys: OpenSSL failed");
  return out;
}

SrtpSender::Stream* SrtpSender::stream(uint32_t ssrc) {
  for (auto& s : streams_) {
    if (s.ssrc == ssrc) return &s;
  }
  if (streams_.size() >= kMaxSsrcs) return nullptr;
  streams_.push_back(Stream{ssrc});
  return &streams_.back();
}

Result<size_t> SrtpSender::protect_rtp(std::span<uint8_t> buffer, size_t length) {
  constexpr size_t kFixedHeader = 12;
  if (length < kFixedHeader || length > buffer.size() || buffer.size() - length < kMaxOverhead) {
    return refused(Errc::Malformed, "parse_err", "protect RTP: not RTP, or no room for the tag");
  }
  uint8_t* p = buffer.data();
  // The header libsrtp leaves clear: the fixed part, the CSRCs, and the extension (its 4-byte
  // head, then its length in 32-bit words). Version and padding are not checked, as libsrtp does not.
  size_t header = kFixedHeader + 4 * size_t{p[0] & 0x0Fu};
  if ((p[0] & 0x10) != 0) {
    header = header + 4 <= length ? header + 4 + 4 * ((size_t{p[header + 2]} << 8) | p[header + 3]) : length + 1;
  }
  if (header > length) return refused(Errc::Malformed, "parse_err", "protect RTP: the header overruns the packet");
  if (profile_ == SrtpProfile::AeadAes128Gcm && header > kMaxGcmHeader) {
    return refused(Errc::Rejected, "cipher_fail", "protect RTP: a header longer than libsrtp's GCM takes");
  }
  const uint32_t ssrc = be32(p + 8);
  const uint16_t seq = static_cast<uint16_t>((p[2] << 8) | p[3]);
  Stream* s = stream(ssrc);
  if (!s) return refused(Errc::Rejected, "ssrc_limit", "protect RTP");

  // libsrtp's estimate (its rdbx): below half the sequence space the rollover counter is 0;
  // beyond, the index nearest the newest one.
  const uint64_t local = s->rtp_index;
  uint64_t index = seq;
  int64_t delta = int64_t{seq} - int64_t(local & 0xFFFF);
  if (local > 0x8000) {
    const uint32_t roc = static_cast<uint32_t>(local >> 16);
    const int64_t local_seq = static_cast<int64_t>(local & 0xFFFF);
    uint32_t guess_roc = roc;
    if (local_seq < 0x8000 && seq - local_seq > 0x8000) {
      guess_roc = roc - 1;
      delta -= 0x10000;
    } else if (local_seq >= 0x8000 && local_seq - 0x8000 > seq) {
      guess_roc = roc + 1;
      delta += 0x10000;
    }
    index = (uint64_t{guess_roc} << 16 | seq) & 0xFFFFFFFFFFFFull;
  }
  if (delta <= -static_cast<int64_t>(kWindow)) return refused(Errc::Rejected, "replay_old", "protect RTP");

  const size_t payload = length - header;
  const uint32_t roc = static_cast<uint32_t>(index >> 16);
  const size_t tag_length = srtp_tag_length(profile_);
  if (profile_ == SrtpProfile::AeadAes128Gcm) {
    uint8_t iv[RecordCipher::kNonceSize] = {};  // 00 00 | SSRC | ROC | SEQ, XOR the salt
    std::memcpy(iv + 2, p + 8, 4);
    xor_be(iv + 6, roc, 4);
    xor_be(iv + 10, seq, 2);
    for (size_t i = 0; i < sizeof iv; ++i) iv[i] ^= rtp_->salt[i];
    if (!rtp_->gcm->seal(iv, {p, header}, p + header, payload, p + length)) {
      return refused(Errc::Malformed, "cipher_fail", "protect RTP");
    }
  } else {
    uint8_t iv[16];  // salt * 2^16 XOR SSRC * 2^64 XOR index * 2^16
    std::memcpy(iv, rtp_->salt.data(), 16);
    xor_be(iv + 4, ssrc, 4);
    xor_be(iv + 8, index, 6);
    uint8_t roc_bytes[4] = {};
    xor_be(roc_bytes, roc, 4);
    if (!rtp_->encrypt_ctr(iv, p + header, payload) ||
        !rtp_->authenticate(p, length, roc_bytes, p + length, tag_length)) {
      return refused(Errc::Malformed, "cipher_fail", "protect RTP");
    }
  }
  if (delta > 0) s->rtp_index = index;
  return length + tag_length;
}

Result<size_t> SrtpSender::protect_rtcp(std::span<uint8_t> buffer, size_t length) {
  constexpr size_t kHeader = 8;  // RTCP's first header and SSRC stay clear
  if (length < kHeader || length > buffer.size() || buffer.size() - length < kMaxOverhead) {
    return refused(Errc::Malformed, "parse_err", "protect RTCP: not RTCP, or no room for the index and tag");
  }
  uint8_t* p = buffer.data();
  const uint32_t ssrc = be32(p + 4);
  Stream* s = stream(ssrc);
  if (!s) return refused(Errc::Rejected, "ssrc_limit", "protect RTCP");
  if (s->rtcp_index >= 0x7FFFFFFF) return refused(Errc::Rejected, "key_expired", "protect RTCP");
  const uint32_t index = s->rtcp_index + 1;
  uint8_t trailer[4] = {};  // E bit | index
  xor_be(trailer, 0x80000000u | index, 4);
  const size_t tag_length = srtp_tag_length(profile_);
  if (profile_ == SrtpProfile::AeadAes128Gcm) {
    uint8_t iv[RecordCipher::kNonceSize] = {};  // 00 00 | SSRC | 00 00 | index, XOR the salt
    std::memcpy(iv + 2, p + 4, 4);
    xor_be(iv + 8, index, 4);
    for (size_t i = 0; i < sizeof iv; ++i) iv[i] ^= rtcp_->salt[i];
    uint8_t aad[kHeader + 4];
    std::memcpy(aad, p, kHeader);
    std::memcpy(aad + kHeader, trailer, 4);
    // header | ciphertext | tag | E + index (RFC 7714 9.2)
    if (!rtcp_->gcm->seal(iv, aad, p + kHeader, length - kHeader, p + length)) {
      return refused(Errc::Malformed, "cipher_fail", "protect RTCP");
    }
    std::memcpy(p + length + tag_length, trailer, 4);
  } else {
    uint8_t iv[16];  // salt * 2^16 XOR SSRC * 2^64 XOR index * 2^16
    std::memcpy(iv, rtcp_->salt.data(), 16);
    xor_be(iv + 4, ssrc, 4);
    xor_be(iv + 10, index, 4);
    // header | ciphertext | E + index | tag over all before it (RFC 3711 3.4)
    if (!rtcp_->encrypt_ctr(iv, p + kHeader, length - kHeader)) {
      return refused(Errc::Malformed, "cipher_fail", "protect RTCP");
    }
    std::memcpy(p + length, trailer, 4);
    if (!rtcp_->authenticate(p, length + 4, {}, p + length + 4, tag_length)) {
      return refused(Errc::Malformed, "cipher_fail", "protect RTCP");
    }
  }
  s->rtcp_index = index;
  return length + 4 + tag_length;
}

}  // namespace sluice::server
