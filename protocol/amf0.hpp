// AMF0 decoding and encoding (Adobe AMF0 specification; docs/protocol.md, "AMF0"). Sans-I/O, never
// throws.
//
// Decoding rules, in addition to the specification:
//  1. Every length is checked against the remaining input before anything is allocated, and no
//     container reserves memory from a declared count: it grows as values actually decode.
//  2. Nesting deeper than DecodeLimits::max_depth, or more values or bytes than the limits allow,
//     fails with Errc::LimitExceeded.
//  3. An object, ECMA array or typed object whose 0x00 0x00 0x09 terminator is missing at the end
//     of the input is accepted (some encoders omit it). The input may end where a member name
//     would start, or after the two zero bytes of the terminator.
//  4. The ECMA array count is only a hint and is ignored: members are read up to the terminator.
//  5. References (0x07) decode to Type::Reference with the u16 index, unresolved (amf_value.hpp).
//  6. The 0x11 marker decodes one AMF3 value with fresh AMF3 reference tables: the switch is not
//     sticky (docs/protocol.md, "The AMF0 to AMF3 switch") and each switched value starts a new
//     AMF3 context.
//  7. MovieClip (0x04) and RecordSet (0x0E) are reserved by the specification: Errc::Unsupported.
//     A stray object-end marker (0x09) or an unknown marker: Errc::Malformed.
// Error contexts read "amf0 <what> at byte N", N counted from the reader's start.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "protocol/amf_value.hpp"
#include "base/byte_io.hpp"
#include "base/result.hpp"

namespace sluice::protocol::amf {

namespace amf0_marker {
inline constexpr uint8_t kNumber = 0x00;
inline constexpr uint8_t kBoolean = 0x01;
inline constexpr uint8_t kString = 0x02;
inline constexpr uint8_t kObject = 0x03;
inline constexpr uint8_t kMovieClip = 0x04;  // reserved
inline constexpr uint8_t kNull = 0x05;
inline constexpr uint8_t kUndefined = 0x06;
inline constexpr uint8_t kReference = 0x07;
inline constexpr uint8_t kEcmaArray = 0x08;
inline constexpr uint8_t kObjectEnd = 0x09;
inline constexpr uint8_t kStrictArray = 0x0A;
inline constexpr uint8_t kDate = 0x0B;
inline constexpr uint8_t kLongString = 0x0C;
inline constexpr uint8_t kUnsupported = 0x0D;
inline constexpr uint8_t kRecordSet = 0x0E;  // reserved
inline constexpr uint8_t kXmlDocument = 0x0F;
inline constexpr uint8_t kTypedObject = 0x10;
inline constexpr uint8_t kSwitchToAmf3 = 0x11;
}  // namespace amf0_marker

// Decodes one value starting at the reader's position; on success the reader is just past it.
Result<Value> decode_amf0(ByteReader& in, const DecodeLimits& limits = {});
// The same, spending a budget shared with other values of the same message.
Result<Value> decode_amf0(ByteReader& in, const DecodeLimits& limits, DecodeBudget& budget);
// Decodes values until the input ends (a whole command or data message body).
Result<std::vector<Value>> decode_amf0_all(std::span<const uint8_t> bytes, const DecodeLimits& limits = {});

// Appends the AMF0 encoding of v. Strings longer than 65535 bytes become long strings. Values AMF0
// cannot express (AMF3-only kinds, arrays with both dense and associative parts, member or class
// names longer than 65535 bytes) are written as 0x11 followed by their AMF3 encoding; convert
// them first if the peer only speaks AMF0. A reference index above 65535 is written as undefined.
void encode_amf0(const Value& v, std::vector<uint8_t>& out);

}  // namespace sluice::protocol::amf
