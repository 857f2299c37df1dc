// RecordCipher: the AEAD that seals the body of one TLS 1.3 record (TlsRecordSealer frames the
// records). Two engines (docs/tls.md, "Records"):
//
//  - intel-ipsec-mb for AES-128-GCM and AES-256-GCM when the build found it and the CPU has
//    AES-NI: its VAES/AVX-512 code seals 16 KiB records several times faster than OpenSSL 3.0's
//    EVP on the same core (docs/benchmarks.md, "RTMPS with intel-ipsec-mb");
//  - OpenSSL's EVP for everything else (ChaCha20-Poly1305, builds and CPUs without it, or
//    SLUICE_AES_GCM=openssl in the environment, for comparisons).
//
// Both give the same bytes: the cipher is the suite's, only the code that runs it differs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

namespace sluice::server {

class RecordCipher {
 public:
  static constexpr size_t kNonceSize = 12;
  static constexpr size_t kTagSize = 16;

  // The key length of a TLS 1.3 suite (0x1301, 0x1302, 0x1303); 0 for another suite.
  static size_t key_size(uint16_t suite);
  enum class Engine { best, openssl };
  // Null for another suite, a key of the wrong size, or when OpenSSL fails. `best`: intel-ipsec-mb
  // where it can, else OpenSSL; `openssl` always OpenSSL (the tests compare the two).
  static std::unique_ptr<RecordCipher> make(uint16_t suite, std::span<const uint8_t> key, Engine engine = Engine::best);
  // Which code seals the suite's records in this process, for logs and the benchmarks: "intel-ipsec-mb
  // (avx512)", "openssl".
  static const char* engine(uint16_t suite);

  using Pieces = std::span<const std::span<const uint8_t>>;

  virtual ~RecordCipher() = default;
  // Encrypts the concatenation of `pieces` under `nonce` into `out` (as many bytes as the pieces
  // hold), authenticating `aad` too, and writes the tag to `tag`. A piece may be `out` itself
  // (in place). intel-ipsec-mb reads each piece where it lies and writes the ciphertext once;
  // OpenSSL's EVP gathers the pieces into `out` first, then encrypts there in one call (it is
  // slow on small pieces). False only if the engine fails.
  virtual bool seal(const uint8_t* nonce, std::span<const uint8_t> aad, Pieces pieces, uint8_t* out, uint8_t* tag) = 0;
  bool seal(const uint8_t* nonce, std::span<const uint8_t> aad, uint8_t* data, size_t length, uint8_t* tag) {
    const std::span<const uint8_t> one[] = {{data, length}};
    return seal(nonce, aad, one, data, tag);
  }
};

}  // namespace sluice::server
