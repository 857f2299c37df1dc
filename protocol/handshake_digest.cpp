#include "protocol/handshake_digest.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <algorithm>

namespace sluice::protocol {
namespace {

// The digest offset field is 4 bytes at the start of the digest block; the sum of those bytes
// modulo 728 keeps the 32-byte digest inside the 764-byte block (764 - 4 - 32 = 728).
constexpr size_t kOffsetFieldSize = 4;
constexpr size_t kDigestOffsetModulus = 728;

// The Flash Media Server key: the 36-byte ASCII prefix (partial key) followed by 32 constant bytes.
constexpr std::array<uint8_t, 68> kFmsKey = {
    'G',  'e',  'n',  'u',  'i',  'n',  'e',  ' ',  'A',  'd',  'o',  'b',  'e',  ' ',  'F',  'l',  'a',
    's',  'h',  ' ',  'M',  'e',  'd',  'i',  'a',  ' ',  'S',  'e',  'r',  'v',  'e',  'r',  ' ',  '0',
    '0',  '1',  0xF0, 0xEE, 0xC2, 0x4A, 0x80, 0x68, 0xBE, 0xE8, 0x2E, 0x00, 0xD0, 0xD1, 0x02, 0x9E, 0x7E,
    0x57, 0x6E, 0xEC, 0x5D, 0x2D, 0x29, 0x80, 0x6F, 0xAB, 0x93, 0xB8, 0xE6, 0x36, 0xCF, 0xEB, 0x31, 0xAE,
};
constexpr size_t kFmsPartialKeySize = 36;

// The Flash Player key: the 30-byte ASCII prefix followed by the same 32 constant bytes.
constexpr std::array<uint8_t, 62> kFpKey = {
    'G',  'e',  'n',  'u',  'i',  'n',  'e',  ' ',  'A',  'd',  'o',  'b',  'e',  ' ',  'F',  'l',
    'a',  's',  'h',  ' ',  'P',  'l',  'a',  'y',  'e',  'r',  ' ',  '0',  '0',  '1',  0xF0, 0xEE,
    0xC2, 0x4A, 0x80, 0x68, 0xBE, 0xE8, 0x2E, 0x00, 0xD0, 0xD1, 0x02, 0x9E, 0x7E, 0x57, 0x6E, 0xEC,
    0x5D, 0x2D, 0x29, 0x80, 0x6F, 0xAB, 0x93, 0xB8, 0xE6, 0x36, 0xCF, 0xEB, 0x31, 0xAE,
};
constexpr size_t kFpPartialKeySize = 30;

// Constant-time comparison: the digests authenticate the peer, so do not leak how many bytes
// of a forged one were right.
bool digests_equal(std::span<const uint8_t> a, const HandshakeDigest& b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), b.size()) == 0;
}

}  // namespace

std::span<const uint8_t> fp_partial_key() { return std::span(kFpKey).first(kFpPartialKeySize); }
std::span<const uint8_t> fp_full_key() { return kFpKey; }
std::span<const uint8_t> fms_partial_key() { return std::span(kFmsKey).first(kFmsPartialKeySize); }
std::span<const uint8_t> fms_full_key() { return kFmsKey; }

size_t digest_offset(HandshakePacket packet, size_t base) {
  if (base != kDigestBaseKeyFirst) base = kDigestBaseDigestFirst;
  size_t sum = 0;
  for (size_t i = 0; i < kOffsetFieldSize; ++i) sum += packet[base + i];
  return base + kOffsetFieldSize + sum % kDigestOffsetModulus;
}

HandshakeDigest hmac_sha256(std::span<const uint8_t> key, std::span<const uint8_t> data) {
  // HMAC() only fails on allocation failure; the digest then stays zero and simply never
  // verifies, which is the safe outcome for an authentication check.
  HandshakeDigest out{};
  unsigned int out_len = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), data.data(), data.size(), out.data(), &out_len);
  return out;
}

HandshakeDigest compute_packet_digest(HandshakePacket packet, size_t base, std::span<const uint8_t> key) {
  // The digest covers the packet minus its own 32 bytes; gather the two pieces into one buffer
  // so that a single one-shot HMAC call does the work.
  const size_t pos = digest_offset(packet, base);
  std::array<uint8_t, kSignedPayloadSize> message;
  auto next = std::copy(packet.begin(), packet.begin() + pos, message.begin());
  std::copy(packet.begin() + pos + kDigestSize, packet.end(), next);
  return hmac_sha256(key, message);
}

void sign_packet(MutableHandshakePacket packet, size_t base, std::span<const uint8_t> key) {
  const HandshakeDigest digest = compute_packet_digest(packet, base, key);
  std::copy(digest.begin(), digest.end(), packet.begin() + digest_offset(packet, base));
}

bool verify_packet_digest(HandshakePacket packet, size_t base, std::span<const uint8_t> key) {
  const HandshakeDigest expected = compute_packet_digest(packet, base, key);
  return digests_equal(packet.subspan(digest_offset(packet, base), kDigestSize), expected);
}

std::optional<size_t> find_digest_base(HandshakePacket packet, std::span<const uint8_t> key) {
  for (size_t base : {kDigestBaseKeyFirst, kDigestBaseDigestFirst}) {
    if (verify_packet_digest(packet, base, key)) return base;
  }
  return std::nullopt;
}

HandshakeDigest read_packet_digest(HandshakePacket packet, size_t base) {
  HandshakeDigest digest;
  auto stored = packet.subspan(digest_offset(packet, base), kDigestSize);
  std::copy(stored.begin(), stored.end(), digest.begin());
  return digest;
}

HandshakeDigest response_signature(HandshakePacket packet, std::span<const uint8_t> full_key,
                                   const HandshakeDigest& peer_digest) {
  const HandshakeDigest signing_key = hmac_sha256(full_key, peer_digest);
  return hmac_sha256(signing_key, packet.first<kSignedPayloadSize>());
}

void sign_response(MutableHandshakePacket packet, std::span<const uint8_t> full_key,
                   const HandshakeDigest& peer_digest) {
  const HandshakeDigest signature = response_signature(packet, full_key, peer_digest);
  std::copy(signature.begin(), signature.end(), packet.begin() + kSignedPayloadSize);
}

bool verify_response(HandshakePacket packet, std::span<const uint8_t> full_key, const HandshakeDigest& peer_digest) {
  return digests_equal(packet.last<kDigestSize>(), response_signature(packet, full_key, peer_digest));
}

}  // namespace sluice::protocol
