// STUN messages (RFC 5389, as updated by RFC 8489) as an ICE-lite WebRTC server meets them: the
// connectivity checks browsers and encoders send to its UDP port, read from one datagram, their
// short-term credentials checked. Answers are built by protocol/webrtc/stun_writer.hpp and the
// ICE-lite decision is protocol/webrtc/ice_lite.hpp. docs/webrtc-protocol.md ("STUN") has the wire
// facts this code relies on.
//
// Rules:
//  1. parse_stun() takes exactly one datagram and refuses anything that is not a whole STUN
//     message with the RFC 5389 magic cookie: a clear error, never a partial result. The work is
//     one pass over at most kMaxStunMessage bytes.
//  2. The StunMessage it returns holds views into the datagram (username, reason phrase, the
//     datagram itself for the integrity check): keep the datagram alive while using it.
//  3. FINGERPRINT, when present, is checked by parse_stun(); a mismatch is an error, since it means
//     the datagram is not STUN after all (or was damaged).
//  4. MESSAGE-INTEGRITY is checked apart, by stun_integrity_ok(), because the key depends on the
//     USERNAME: the server first finds the session the username names, then checks with its
//     ice-pwd. Attributes after MESSAGE-INTEGRITY other than FINGERPRINT are ignored, as the RFC
//     says, since they are not covered by it.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "base/result.hpp"
#include "protocol/proxy_header.hpp"

namespace sluice::protocol::webrtc {

inline constexpr uint32_t kStunMagicCookie = 0x2112A442;
inline constexpr size_t kStunHeaderSize = 20;
// One Ethernet MTU. ICE checks are under 200 bytes; anything larger is not a check, and the bound
// lets the integrity check work on a stack copy.
inline constexpr size_t kMaxStunMessage = 1500;
// RFC 5389 15.3: USERNAME is less than 513 bytes.
inline constexpr size_t kMaxStunUsername = 512;
// Unknown comprehension-required attributes remembered for the 420 answer; more are counted but
// not listed (a client sends none).
inline constexpr size_t kMaxUnknownAttributes = 8;
inline constexpr size_t kStunIntegritySize = 20;  // HMAC-SHA1

inline constexpr uint16_t kStunBinding = 0x001;

// Attribute types (RFC 5389 18.2, RFC 8445 16.1) and Chromium's GOOG-NETWORK-INFO, which the parser
// skips like any comprehension-optional attribute (0x8000 and up).
namespace stun_attribute {
inline constexpr uint16_t kMappedAddress = 0x0001;
inline constexpr uint16_t kUsername = 0x0006;
inline constexpr uint16_t kMessageIntegrity = 0x0008;
inline constexpr uint16_t kErrorCode = 0x0009;
inline constexpr uint16_t kUnknownAttributes = 0x000A;
inline constexpr uint16_t kXorMappedAddress = 0x0020;
inline constexpr uint16_t kPriority = 0x0024;
inline constexpr uint16_t kUseCandidate = 0x0025;
inline constexpr uint16_t kSoftware = 0x8022;
inline constexpr uint16_t kFingerprint = 0x8028;
inline constexpr uint16_t kIceControlled = 0x8029;
inline constexpr uint16_t kIceControlling = 0x802A;
inline constexpr uint16_t kGoogNetworkInfo = 0xC057;
}  // namespace stun_attribute

enum class StunClass : uint8_t { Request = 0, Indication = 1, SuccessResponse = 2, ErrorResponse = 3 };

using StunTransactionId = std::array<uint8_t, 12>;

struct StunMessage {
  uint16_t method = 0;  // 12 bits; kStunBinding is the only one ICE uses
  StunClass kind = StunClass::Request;
  StunTransactionId transaction_id{};
  std::span<const uint8_t> datagram;  // the whole message, for stun_integrity_ok()

  std::optional<std::string_view> username;
  std::optional<uint32_t> priority;
  bool use_candidate = false;
  std::optional<uint64_t> ice_controlling;  // the sender's tie-breaker
  std::optional<uint64_t> ice_controlled;
  std::optional<Endpoint> xor_mapped_address;
  std::optional<uint16_t> error_code;  // 300..699, error responses
  std::string_view error_reason;

  // Offset of the MESSAGE-INTEGRITY attribute's header in datagram, when there is one.
  std::optional<size_t> integrity_offset;
  bool has_fingerprint = false;

  std::array<uint16_t, kMaxUnknownAttributes> unknown_required{};
  size_t unknown_required_count = 0;  // may exceed kMaxUnknownAttributes; the first ones are listed

  bool is_binding_request() const { return method == kStunBinding && kind == StunClass::Request; }
};

// One datagram as a STUN message.
// Errors:
//  - Errc::Truncated: fewer than 20 bytes.
//  - Errc::Malformed: the first two bits set or a first byte over 3 (not STUN, RFC 7983), a length field that is not a
//  multiple of
//    4 or not the datagram's size, an attribute that runs past the end, an attribute of a known
//    type with the wrong length or content (a USERNAME over 512 bytes, an address family other
//    than 1 or 2, an error class outside 3..6), a second FINGERPRINT or anything after it, a
//    FINGERPRINT that does not match.
//  - Errc::Unsupported: no magic cookie (RFC 3489's classic STUN, which ICE never sends).
//  - Errc::LimitExceeded: more than kMaxStunMessage bytes.
Result<StunMessage> parse_stun(std::span<const uint8_t> datagram);

// RFC 7983's first test for the demultiplexer, plus the magic cookie: a cheap "is this STUN?".
bool looks_like_stun(std::span<const uint8_t> datagram);

// True when the message has MESSAGE-INTEGRITY and it is the HMAC-SHA1, keyed with `key` (the
// short-term password: the ice-pwd of the side that receives the request, as bytes), of the
// message up to it with the length field adjusted (docs/webrtc-protocol.md, "MESSAGE-INTEGRITY").
// The comparison takes the same time wherever the first difference is.
bool stun_integrity_ok(const StunMessage& message, std::span<const uint8_t> key);
inline bool stun_integrity_ok(const StunMessage& message, std::string_view key) {
  return stun_integrity_ok(message, std::span(reinterpret_cast<const uint8_t*>(key.data()), key.size()));
}

// The HMAC-SHA1 for a MESSAGE-INTEGRITY attribute placed right after `before` (a message's bytes
// from its header up to the attribute): the header's length field is taken as if the message
// ended with that attribute.
std::array<uint8_t, kStunIntegritySize> stun_integrity(std::span<const uint8_t> before, std::span<const uint8_t> key);

// The FINGERPRINT value for a message whose bytes before the attribute are `before`: CRC-32 (the
// one of zlib and Ethernet) xor 0x5354554e.
uint32_t stun_fingerprint(std::span<const uint8_t> before);

// The 16-bit message type from a method and a class: the class bits are interleaved with the
// method's (RFC 5389 6).
uint16_t stun_message_type(uint16_t method, StunClass kind);

}  // namespace sluice::protocol::webrtc
