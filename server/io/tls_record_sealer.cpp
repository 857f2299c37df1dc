#include "server/io/tls_record_sealer.hpp"

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>

#include <algorithm>
#include <cstring>
#include <string>

namespace sluice::server {

namespace {

constexpr size_t kIvSize = 12;

// RFC 8446 section 7.1: HKDF-Expand(secret, HkdfLabel, length) with
// HkdfLabel = length (u16) || "tls13 " + label (u8 length) || context (u8 length, empty here).
bool expand_label(const EVP_MD* md, std::span<const uint8_t> secret, const std::string& label, uint8_t* out,
                  size_t length) {
  const std::string full = "tls13 " + label;
  std::vector<uint8_t> info;
  info.push_back(static_cast<uint8_t>(length >> 8));
  info.push_back(static_cast<uint8_t>(length));
  info.push_back(static_cast<uint8_t>(full.size()));
  info.insert(info.end(), full.begin(), full.end());
  info.push_back(0);

  EVP_KDF* kdf = EVP_KDF_fetch(nullptr, "HKDF", nullptr);
  EVP_KDF_CTX* kctx = kdf ? EVP_KDF_CTX_new(kdf) : nullptr;
  EVP_KDF_free(kdf);
  if (!kctx) return false;
  int mode = EVP_KDF_HKDF_MODE_EXPAND_ONLY;
  OSSL_PARAM params[] = {
      OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, const_cast<char*>(EVP_MD_get0_name(md)), 0),
      OSSL_PARAM_construct_int(OSSL_KDF_PARAM_MODE, &mode),
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, const_cast<uint8_t*>(secret.data()), secret.size()),
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, info.data(), info.size()), OSSL_PARAM_construct_end()};
  const bool ok = EVP_KDF_derive(kctx, out, length, params) == 1;
  EVP_KDF_CTX_free(kctx);
  return ok;
}

}  // namespace

std::unique_ptr<TlsRecordSealer> TlsRecordSealer::make(uint16_t suite, std::span<const uint8_t> secret) {
  const EVP_MD* digest = nullptr;
  switch (suite) {
    case 0x1301: digest = EVP_sha256(); break;
    case 0x1302: digest = EVP_sha384(); break;
    case 0x1303: digest = EVP_sha256(); break;
    default: return nullptr;
  }
  if (secret.size() != static_cast<size_t>(EVP_MD_get_size(digest))) return nullptr;
  std::unique_ptr<TlsRecordSealer> s(new TlsRecordSealer);
  s->suite_ = suite;
  s->digest_ = digest;
  s->secret_.assign(secret.begin(), secret.end());
  if (!s->derive()) return nullptr;
  return s;
}

TlsRecordSealer::~TlsRecordSealer() {
  OPENSSL_cleanse(secret_.data(), secret_.size());
  OPENSSL_cleanse(iv_, sizeof iv_);
}

bool TlsRecordSealer::derive() {
  const auto* md = static_cast<const EVP_MD*>(digest_);
  uint8_t key[32];
  const size_t key_size = RecordCipher::key_size(suite_);
  if (key_size == 0 || key_size > sizeof key) return false;
  const bool ok = expand_label(md, secret_, "key", key, key_size) && expand_label(md, secret_, "iv", iv_, kIvSize);
  cipher_ = ok ? RecordCipher::make(suite_, std::span<const uint8_t>(key, key_size)) : nullptr;
  OPENSSL_cleanse(key, sizeof key);
  return cipher_ != nullptr;
}

bool TlsRecordSealer::update_key() {
  std::vector<uint8_t> next(secret_.size());
  if (!expand_label(static_cast<const EVP_MD*>(digest_), secret_, "traffic upd", next.data(), next.size()))
    return false;
  OPENSSL_cleanse(secret_.data(), secret_.size());
  secret_.swap(next);
  sequence_ = 0;
  return derive();
}

bool TlsRecordSealer::seal_record(uint8_t* record, size_t length, uint8_t content_type) {
  const size_t sealed = length + 1 + kTagSize;
  record[0] = kApplicationData;  // the outer type is always application_data (section 5.2)
  record[1] = 3;
  record[2] = 3;
  record[3] = static_cast<uint8_t>(sealed >> 8);
  record[4] = static_cast<uint8_t>(sealed);
  uint8_t nonce[kIvSize];
  std::copy(iv_, iv_ + kIvSize, nonce);
  for (size_t i = 0; i < 8; ++i) nonce[kIvSize - 1 - i] ^= static_cast<uint8_t>(sequence_ >> (8 * i));
  uint8_t* body = record + kHeaderSize;
  record_pieces_.push_back({&content_type, 1});
  if (!cipher_->seal(nonce, std::span<const uint8_t>(record, kHeaderSize), record_pieces_, body, body + length + 1)) {
    return false;
  }
  ++sequence_;
  return true;
}

bool TlsRecordSealer::seal(std::span<const std::span<const uint8_t>> pieces, size_t total, uint8_t content_type,
                           ByteBuffer& out) {
  const size_t start = out.size();
  out.resize(start + sealed_size(total));
  uint8_t* record = out.data() + start;
  size_t piece = 0;
  size_t offset = 0;
  do {
    const size_t length = std::min(total, kMaxPlaintext);
    // The record's share of the pieces: the cipher reads them where they are.
    record_pieces_.clear();
    for (size_t left = length; left > 0;) {
      if (piece >= pieces.size()) {
        out.resize(start);
        return false;
      }
      const std::span<const uint8_t> p = pieces[piece];
      const size_t take = std::min(left, p.size() - offset);
      if (take > 0) record_pieces_.push_back(p.subspan(offset, take));
      left -= take;
      offset += take;
      if (offset == p.size()) ++piece, offset = 0;
    }
    if (!seal_record(record, length, content_type)) {
      out.resize(start);
      return false;
    }
    record += length + kOverhead;
    total -= length;
  } while (total > 0);
  return true;
}

bool TlsRecordSealer::seal(std::span<const uint8_t> plaintext, uint8_t content_type, ByteBuffer& out) {
  const std::span<const uint8_t> one[] = {plaintext};
  return seal(one, plaintext.size(), content_type, out);
}

}  // namespace sluice::server
