// RecordCipher (server/io/record_cipher.hpp): whichever engine seals, the bytes are the suite's. The
// fast engine (intel-ipsec-mb) and OpenSSL's EVP seal the same plaintexts to the same ciphertexts
// and tags, for every suite and for record lengths around the block and vector sizes.
#include "server/io/record_cipher.hpp"

#include <doctest/doctest.h>

#include <cstdlib>
#include <span>
#include <string>
#include <vector>

using sluice::server::RecordCipher;

namespace {

std::vector<uint8_t> pattern(size_t n, uint8_t seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(seed + i * 131 + (i >> 8));
  return v;
}

}  // namespace

TEST_CASE("both engines seal the same bytes for every suite and length") {
  for (uint16_t suite : {uint16_t{0x1301}, uint16_t{0x1302}, uint16_t{0x1303}}) {
    const std::string which = "suite " + std::to_string(suite) + ": " + RecordCipher::engine(suite);
    MESSAGE(which);
    const auto key = pattern(RecordCipher::key_size(suite), 7);
    auto best = RecordCipher::make(suite, key);
    auto evp = RecordCipher::make(suite, key, RecordCipher::Engine::openssl);
    REQUIRE(best);
    REQUIRE(evp);
    const uint8_t aad[5] = {23, 3, 3, 0x40, 0x11};
    for (size_t length : {0, 1, 15, 16, 17, 63, 64, 65, 255, 256, 257, 1000, 4096, 4097, 16385}) {
      for (uint8_t n = 0; n < 3; ++n) {
        auto nonce = pattern(RecordCipher::kNonceSize, n);
        auto a = pattern(length, static_cast<uint8_t>(length));
        auto b = a;
        const auto plain = a;
        uint8_t tag_a[RecordCipher::kTagSize], tag_b[RecordCipher::kTagSize];
        REQUIRE(best->seal(nonce.data(), aad, a.data(), a.size(), tag_a));
        REQUIRE(evp->seal(nonce.data(), aad, b.data(), b.size(), tag_b));
        CHECK(a == b);
        CHECK(std::vector<uint8_t>(tag_a, tag_a + 16) == std::vector<uint8_t>(tag_b, tag_b + 16));
        if (length > 0) CHECK(a != plain);
      }
    }
  }
}

TEST_CASE("a record sealed from scattered pieces equals the same bytes sealed in one piece") {
  // The pieces of a flush batch: a chunk header, payload slices, one-byte headers, the content type.
  const std::vector<size_t> cuts = {12, 4096, 1, 4096, 1, 3, 2000, 15, 16, 17, 1};
  for (uint16_t suite : {uint16_t{0x1301}, uint16_t{0x1302}, uint16_t{0x1303}}) {
    const auto key = pattern(RecordCipher::key_size(suite), 3);
    for (auto engine : {RecordCipher::Engine::best, RecordCipher::Engine::openssl}) {
      auto cipher = RecordCipher::make(suite, key, engine);
      REQUIRE(cipher);
      size_t total = 0;
      for (size_t c : cuts) total += c;
      const auto plain = pattern(total, 9);
      std::vector<std::span<const uint8_t>> pieces;
      for (size_t at = 0, i = 0; i < cuts.size(); at += cuts[i], ++i) pieces.emplace_back(plain.data() + at, cuts[i]);
      const auto nonce = pattern(RecordCipher::kNonceSize, 1);
      const uint8_t aad[5] = {23, 3, 3, 0x2b, 0x00};
      std::vector<uint8_t> scattered(total), whole = plain;
      uint8_t tag_s[RecordCipher::kTagSize], tag_w[RecordCipher::kTagSize];
      REQUIRE(cipher->seal(nonce.data(), aad, pieces, scattered.data(), tag_s));
      REQUIRE(cipher->seal(nonce.data(), aad, whole.data(), whole.size(), tag_w));
      CHECK(scattered == whole);
      CHECK(std::vector<uint8_t>(tag_s, tag_s + 16) == std::vector<uint8_t>(tag_w, tag_w + 16));
    }
  }
}

TEST_CASE("a key of the wrong size or another suite makes no cipher") {
  const auto key16 = pattern(16, 1);
  const auto key32 = pattern(32, 1);
  CHECK(RecordCipher::make(0x1301, key32) == nullptr);
  CHECK(RecordCipher::make(0x1302, key16) == nullptr);
  CHECK(RecordCipher::make(0x1304, key16) == nullptr);
  CHECK(RecordCipher::key_size(0xc02f) == 0);
}

#if defined(__x86_64__)
TEST_CASE("CI's x86-64 machines seal AES-GCM with intel-ipsec-mb") {
  // tools/install-deps.sh installs it there; a build that lost it would cost RTMPS several times
  // the CPU per byte without any test failing.
  if (!std::getenv("SLUICE_CI")) return;
  CHECK(std::string(RecordCipher::engine(0x1301)).rfind("intel-ipsec-mb", 0) == 0);
  CHECK(std::string(RecordCipher::engine(0x1303)) == "openssl");
}
#endif
