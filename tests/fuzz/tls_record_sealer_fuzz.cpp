// TlsRecordSealer (server/io/tls_record_sealer.hpp) on arbitrary suites, secrets, pieces, content
// types and key updates: no crash, no read out of bounds, and every record it makes opens with an
// independent RFC 8446 record opener written here on OpenSSL's EVP (key and IV by HKDF-Expand-Label,
// nonce = IV XOR sequence number, the header as additional data): header 23 / 3.3 / length,
// plaintext of at most 16384 bytes, the content type last, the pieces' bytes in order, sequence
// numbers from 0 without a gap, and after a key update the next secret's keys from 0 again.
//
// Input:
//   byte 0    suite (0x1301 + value % 3), byte 1 the content type
//   then the secret (32 bytes, 48 for 0x1302)
//   then records of: u8 op (bit 0: a key update before this seal), u8 piece count (up to 16),
//   then per piece a u16be length (bit 15 set: that many bytes of a repeated byte, up to 32 KiB,
//   instead of input bytes) and its bytes.
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>
#include <vector>

#include "server/io/tls_record_sealer.hpp"
#include "tests/fuzz/fuzz_input.hpp"

using sluice::ByteBuffer;
using sluice::server::TlsRecordSealer;

namespace {

std::vector<uint8_t> expand_label(const EVP_MD* md, const std::vector<uint8_t>& secret, const std::string& label,
                                  size_t length) {
  const std::string full = "tls13 " + label;
  std::vector<uint8_t> info = {static_cast<uint8_t>(length >> 8), static_cast<uint8_t>(length),
                               static_cast<uint8_t>(full.size())};
  info.insert(info.end(), full.begin(), full.end());
  info.push_back(0);
  std::vector<uint8_t> out(length);
  EVP_KDF* kdf = EVP_KDF_fetch(nullptr, "HKDF", nullptr);
  EVP_KDF_CTX* ctx = EVP_KDF_CTX_new(kdf);
  EVP_KDF_free(kdf);
  int mode = EVP_KDF_HKDF_MODE_EXPAND_ONLY;
  OSSL_PARAM params[] = {
      OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, const_cast<char*>(EVP_MD_get0_name(md)), 0),
      OSSL_PARAM_construct_int(OSSL_KDF_PARAM_MODE, &mode),
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, const_cast<uint8_t*>(secret.data()), secret.size()),
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, info.data(), info.size()), OSSL_PARAM_construct_end()};
  FUZZ_CHECK(EVP_KDF_derive(ctx, out.data(), length, params) == 1);
  EVP_KDF_CTX_free(ctx);
  return out;
}

// The reader's side: keys from the secret, records opened in sequence.
struct Opener {
  const EVP_CIPHER* cipher;
  const EVP_MD* md;
  std::vector<uint8_t> secret, key, iv;
  uint64_t sequence = 0;

  void derive() {
    key = expand_label(md, secret, "key", static_cast<size_t>(EVP_CIPHER_get_key_length(cipher)));
    iv = expand_label(md, secret, "iv", 12);
    sequence = 0;
  }
  void update() {
    secret = expand_label(md, secret, "traffic upd", secret.size());
    derive();
  }
  // Opens the records in `sealed`: appends their plaintext (content type removed) to `plain`.
  void open_all(std::span<const uint8_t> sealed, uint8_t content_type, std::vector<uint8_t>& plain) {
    size_t at = 0;
    do {
      FUZZ_CHECK(sealed.size() - at >= 5);
      const uint8_t* h = sealed.data() + at;
      FUZZ_CHECK(h[0] == 23 && h[1] == 3 && h[2] == 3);
      const size_t length = size_t{h[3]} << 8 | h[4];
      FUZZ_CHECK(length >= 17 && length <= 16384 + 17 && sealed.size() - at - 5 >= length);
      uint8_t nonce[12];
      for (size_t i = 0; i < 12; ++i) nonce[i] = iv[i];
      for (size_t i = 0; i < 8; ++i) nonce[11 - i] ^= static_cast<uint8_t>(sequence >> (8 * i));
      EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
      std::vector<uint8_t> out(length - 16);
      int n = 0;
      FUZZ_CHECK(EVP_DecryptInit_ex(ctx, cipher, nullptr, nullptr, nullptr) == 1);
      FUZZ_CHECK(EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_IVLEN, 12, nullptr) == 1);
      FUZZ_CHECK(EVP_DecryptInit_ex(ctx, nullptr, nullptr, key.data(), nonce) == 1);
      FUZZ_CHECK(EVP_DecryptUpdate(ctx, nullptr, &n, h, 5) == 1);
      FUZZ_CHECK(EVP_DecryptUpdate(ctx, out.data(), &n, h + 5, static_cast<int>(length - 16)) == 1);
      FUZZ_CHECK(EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, 16, const_cast<uint8_t*>(h + 5 + length - 16)) == 1);
      FUZZ_CHECK(EVP_DecryptFinal_ex(ctx, out.data() + n, &n) == 1);  // the tag matches
      EVP_CIPHER_CTX_free(ctx);
      FUZZ_CHECK(out.back() == content_type);
      plain.insert(plain.end(), out.begin(), out.end() - 1);
      ++sequence;
      at += 5 + length;
    } while (at < sealed.size());
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  sluice::fuzz::FuzzInput r{std::span(data, size)};
  static constexpr uint16_t kSuites[] = {0x1301, 0x1302, 0x1303};
  const uint16_t suite = kSuites[r.be(1) % 3];
  const uint8_t content_type = static_cast<uint8_t>(r.be(1));
  Opener opener{suite == 0x1301   ? EVP_aes_128_gcm()
                : suite == 0x1302 ? EVP_aes_256_gcm()
                                  : EVP_chacha20_poly1305(),
                suite == 0x1302 ? EVP_sha384() : EVP_sha256(),
                {},
                {},
                {},
                0};
  const size_t secret_size = suite == 0x1302 ? 48 : 32;
  for (size_t i = 0; i < secret_size; ++i) opener.secret.push_back(static_cast<uint8_t>(r.be(1)));
  // A secret of another size is refused.
  FUZZ_CHECK(TlsRecordSealer::make(suite, std::span(opener.secret).first(secret_size - 1)) == nullptr);
  auto sealer = TlsRecordSealer::make(suite, opener.secret);
  FUZZ_CHECK(sealer != nullptr);
  opener.derive();

  std::vector<std::vector<uint8_t>> filled;  // the repeated-byte pieces, kept alive
  for (int record = 0; record < 8 && r.left() > 0; ++record) {
    const uint8_t op = static_cast<uint8_t>(r.be(1));
    if (op & 1) {
      FUZZ_CHECK(sealer->update_key());
      FUZZ_CHECK(sealer->sequence() == 0);
      opener.update();
    }
    const size_t count = r.be(1) % 17;
    std::vector<std::span<const uint8_t>> pieces;
    std::vector<uint8_t> expected;
    for (size_t i = 0; i < count; ++i) {
      const auto len = static_cast<uint16_t>(r.be(2));
      std::span<const uint8_t> p;
      if (len & 0x8000) {
        filled.emplace_back(len & 0x7FFF, static_cast<uint8_t>(len));
        p = filled.back();
      } else {
        p = r.bytes(len);
      }
      pieces.push_back(p);
      expected.insert(expected.end(), p.begin(), p.end());
    }
    ByteBuffer out = {0xAA, 0xBB};  // what is there already stays
    const uint64_t before = sealer->sequence();
    FUZZ_CHECK(sealer->seal(pieces, expected.size(), content_type, out));
    FUZZ_CHECK(out.size() == 2 + TlsRecordSealer::sealed_size(expected.size()));
    FUZZ_CHECK(out[0] == 0xAA && out[1] == 0xBB);
    std::vector<uint8_t> plain;
    opener.open_all(std::span<const uint8_t>(out).subspan(2), content_type, plain);
    FUZZ_CHECK(plain == expected);
    FUZZ_CHECK(sealer->sequence() == opener.sequence && sealer->sequence() > before);
  }
  return 0;
}
