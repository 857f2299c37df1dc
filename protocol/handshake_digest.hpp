// HMAC-SHA256 digests of the complex ("digest", Flash Player 9+) RTMP handshake
// (docs/protocol.md, "Digest handshake").
//
// Pure functions over one 1536-byte C1/S1/C2/S2 packet. They are public so that tests and tools
// (rtmp-dump, corpus-record) can check captured handshakes without running a Handshake object.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

namespace sluice::protocol {

// Size of C1, S1, C2 and S2. C0 and S0 are a single version byte in front of C1/S1.
inline constexpr size_t kHandshakeSize = 1536;
// An HMAC-SHA256 output, used both as the C1/S1 digest and as the C2/S2 signature.
inline constexpr size_t kDigestSize = 32;
// C2/S2 are random bytes followed by a signature over them.
inline constexpr size_t kSignedPayloadSize = kHandshakeSize - kDigestSize;

// The two places a digest block may start (the other 764-byte block holds the key).
// Layout A ("key first", SRS schema 0) puts the digest block at 772; layout B ("digest first",
// SRS schema 1, what librtmp and FFmpeg send for plain RTMP) puts it at 8.
inline constexpr size_t kDigestBaseKeyFirst = 772;
inline constexpr size_t kDigestBaseDigestFirst = 8;

using HandshakeDigest = std::array<uint8_t, kDigestSize>;
using HandshakePacket = std::span<const uint8_t, kHandshakeSize>;
using MutableHandshakePacket = std::span<uint8_t, kHandshakeSize>;

// The Adobe keys. "Partial" keys (ASCII prefix only) sign C1/S1; "full" keys (prefix plus 32
// constant bytes) derive the key that signs C2/S2.
std::span<const uint8_t> fp_partial_key();   // "Genuine Adobe Flash Player 001", 30 bytes.
std::span<const uint8_t> fp_full_key();      // 62 bytes.
std::span<const uint8_t> fms_partial_key();  // "Genuine Adobe Flash Media Server 001", 36 bytes.
std::span<const uint8_t> fms_full_key();     // 68 bytes.

// Offset of the 32-byte digest inside a C1/S1 whose digest block starts at `base` (8 or 772):
// base + 4 + (sum of the 4 bytes at base) % 728. Any other base is a programming error and
// yields base 8's answer.
size_t digest_offset(HandshakePacket packet, size_t base);

// HMAC-SHA256(key, data).
HandshakeDigest hmac_sha256(std::span<const uint8_t> key, std::span<const uint8_t> data);

// HMAC-SHA256(key, packet with the 32 bytes at digest_offset(packet, base) cut out).
HandshakeDigest compute_packet_digest(HandshakePacket packet, size_t base, std::span<const uint8_t> key);

// Writes compute_packet_digest() into the packet at digest_offset().
void sign_packet(MutableHandshakePacket packet, size_t base, std::span<const uint8_t> key);

// True when the digest stored at digest_offset() matches compute_packet_digest().
bool verify_packet_digest(HandshakePacket packet, size_t base, std::span<const uint8_t> key);

// Tries layout A (base 772) and then layout B (base 8), the order NGX, SRS and FFmpeg use,
// and returns the base whose digest verifies.
std::optional<size_t> find_digest_base(HandshakePacket packet, std::span<const uint8_t> key);

// The 32 digest bytes stored in a packet whose digest block starts at `base`.
HandshakeDigest read_packet_digest(HandshakePacket packet, size_t base);

// The C2/S2 signature: HMAC-SHA256(HMAC-SHA256(full_key, peer_digest), packet[0..1503]).
HandshakeDigest response_signature(HandshakePacket packet, std::span<const uint8_t> full_key,
                                   const HandshakeDigest& peer_digest);

// Writes response_signature() into the last 32 bytes of a C2/S2.
void sign_response(MutableHandshakePacket packet, std::span<const uint8_t> full_key,
                   const HandshakeDigest& peer_digest);

// True when the last 32 bytes of a C2/S2 equal response_signature().
bool verify_response(HandshakePacket packet, std::span<const uint8_t> full_key, const HandshakeDigest& peer_digest);

}  // namespace sluice::protocol
