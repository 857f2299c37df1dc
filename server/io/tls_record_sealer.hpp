// TlsRecordSealer: TLS 1.3 records made by Sluice from a connection's write traffic secret
// (docs/tls.md, "Records"), so that the pieces of a batch of RTMP messages are copied once, into
// their record in the socket's output, and encrypted there: no copy of the whole batch, none into
// OpenSSL's record buffer and out of it again. OpenSSL still does the handshake, the reading side
// and the cipher itself (EVP); this class only frames records as RFC 8446 section 5.2 says:
//
//  - a record carries at most 16384 bytes of plaintext, then its content type (no padding);
//  - header: type 23 (application_data), legacy version 3.3, the length of what follows;
//  - AEAD with the header as additional data, nonce = write_iv XOR the record's sequence number
//    (64 bits, big-endian, left-padded to the IV's 12 bytes), a 16-byte tag;
//  - key and IV: HKDF-Expand-Label(secret, "key" / "iv", "", length) (section 7.3); a key update
//    replaces the secret by HKDF-Expand-Label(secret, "traffic upd", "", hash length) and starts
//    the sequence at 0 again (section 7.2).
//
// Only the three TLS 1.3 suites Sluice offers (AES-128-GCM, AES-256-GCM, ChaCha20-Poly1305).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "base/byte_buffer.hpp"
#include "server/io/record_cipher.hpp"

namespace sluice::server {

class TlsRecordSealer {
 public:
  static constexpr size_t kMaxPlaintext = 16384;
  static constexpr size_t kHeaderSize = 5;
  static constexpr size_t kTagSize = 16;
  static constexpr size_t kOverhead = kHeaderSize + 1 + kTagSize;  // header, content type, tag
  static constexpr uint8_t kApplicationData = 23;
  static constexpr uint8_t kAlert = 21;
  static constexpr uint8_t kHandshake = 22;

  // suite: the cipher suite's 2-byte code (0x1301 TLS_AES_128_GCM_SHA256, 0x1302 TLS_AES_256_GCM_SHA384,
  // 0x1303 TLS_CHACHA20_POLY1305_SHA256). Null for another suite, a secret of the wrong size for
  // the suite's hash, or when OpenSSL cannot derive the keys.
  static std::unique_ptr<TlsRecordSealer> make(uint16_t suite, std::span<const uint8_t> secret);
  ~TlsRecordSealer();
  TlsRecordSealer(const TlsRecordSealer&) = delete;
  TlsRecordSealer& operator=(const TlsRecordSealer&) = delete;

  // The bytes seal() appends for `plaintext` bytes of content.
  static size_t sealed_size(size_t plaintext) {
    const size_t records = plaintext == 0 ? 1 : (plaintext + kMaxPlaintext - 1) / kMaxPlaintext;
    return plaintext + records * kOverhead;
  }

  // Seals the concatenation of `pieces` (`total` bytes in all) as records of `content_type`,
  // appended to `out`. The cipher reads each record's pieces where they lie and writes the
  // ciphertext into `out` once (RecordCipher). False only if the cipher fails (`out` is then as
  // it was). The pieces must not overlap `out`.
  bool seal(std::span<const std::span<const uint8_t>> pieces, size_t total, uint8_t content_type, ByteBuffer& out);
  bool seal(std::span<const uint8_t> plaintext, uint8_t content_type, ByteBuffer& out);

  // After a KeyUpdate was sent under the current key: the next secret, sequence 0.
  bool update_key();

  uint64_t sequence() const { return sequence_; }
  void set_sequence(uint64_t s) { sequence_ = s; }

 private:
  TlsRecordSealer() = default;
  bool derive();  // key and IV from secret_
  // Seals record_pieces_ (`length` bytes; seal() gathers them anew for each record) and the
  // content type into `record`, after its header.
  bool seal_record(uint8_t* record, size_t length, uint8_t content_type);

  uint16_t suite_ = 0;
  std::unique_ptr<RecordCipher> cipher_;
  const void* digest_ = nullptr;  // EVP_MD of the suite's hash
  std::vector<uint8_t> secret_;
  uint8_t iv_[12] = {};
  std::vector<std::span<const uint8_t>> record_pieces_;  // kept for its capacity
  uint64_t sequence_ = 0;
};

}  // namespace sluice::server
