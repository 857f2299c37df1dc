// AMF3 decoding and encoding (Adobe AMF3 specification; docs/protocol.md, "AMF3"). Sans-I/O, never
// throws.
//
// AMF3 strings, objects and traits are sent once and then referred to by index, so both directions
// keep reference tables. Use one Amf3Decoder or Amf3Encoder per message: tables persist across
// decode()/encode() calls on the same object until reset().
//
// Decoding rules, in addition to the specification:
//  1. AMF3 parsers have had remote code execution bugs (librtmp CVE-2015-8270/8271/8272), so every
//     length and count is checked against the remaining input before anything is allocated, and
//     containers grow as values decode instead of reserving the declared count.
//  2. Nesting, values, text bytes and reference table sizes are bounded by DecodeLimits; exceeding
//     any of them fails with Errc::LimitExceeded. Text copied out of the string table counts
//     against max_total_bytes, which stops one-byte string references from amplifying input.
//  3. Object references decode to Type::Reference with the table index, unresolved
//     (amf_value.hpp explains why). An index not yet in the table is Errc::Malformed.
//  4. Arrays: the dense part goes to items(), the associative part to properties(); StrictArray
//     when there is no associative part, EcmaArray otherwise (Value::mixed_array).
//  5. Objects flatten sealed and dynamic members into properties(), in wire order. An empty class
//     name gives Type::Object, any other Type::TypedObject.
//  6. Externalizable objects carry a class-specific body that cannot be skipped without knowing the
//     class: Errc::Unsupported.
//  7. XMLDocument (0x07) and XML (0x0B) both decode to Type::Xml; Dictionary entries alternate key
//     and value in items().
// Error contexts read "amf3 <what> at byte N", N counted from the reader's start.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "protocol/amf_value.hpp"
#include "base/byte_io.hpp"
#include "base/result.hpp"

namespace sluice::protocol::amf {

namespace amf3_marker {
inline constexpr uint8_t kUndefined = 0x00;
inline constexpr uint8_t kNull = 0x01;
inline constexpr uint8_t kFalse = 0x02;
inline constexpr uint8_t kTrue = 0x03;
inline constexpr uint8_t kInteger = 0x04;
inline constexpr uint8_t kDouble = 0x05;
inline constexpr uint8_t kString = 0x06;
inline constexpr uint8_t kXmlDocument = 0x07;
inline constexpr uint8_t kDate = 0x08;
inline constexpr uint8_t kArray = 0x09;
inline constexpr uint8_t kObject = 0x0A;
inline constexpr uint8_t kXml = 0x0B;
inline constexpr uint8_t kByteArray = 0x0C;
inline constexpr uint8_t kVectorInt = 0x0D;
inline constexpr uint8_t kVectorUint = 0x0E;
inline constexpr uint8_t kVectorDouble = 0x0F;
inline constexpr uint8_t kVectorObject = 0x10;
inline constexpr uint8_t kDictionary = 0x11;
}  // namespace amf3_marker

// The U29 variable-length integer: 1 to 4 bytes, 29 significant bits.
inline constexpr uint32_t kAmf3MaxU29 = (1u << 29) - 1;
// AMF3 integers are 29-bit two's complement; other int32 values are sent as doubles.
inline constexpr int32_t kAmf3MinInteger = -(1 << 28);
inline constexpr int32_t kAmf3MaxInteger = (1 << 28) - 1;

namespace detail {
class Amf3Reader;
class Amf3Writer;
}  // namespace detail

class Amf3Decoder {
 public:
  explicit Amf3Decoder(const DecodeLimits& limits = {});

  // Decodes one value starting at the reader's position; on success the reader is just past it.
  Result<Value> decode(ByteReader& in);
  // For the AMF0 0x11 switch: starts at the caller's nesting depth and spends the caller's budget.
  Result<Value> decode(ByteReader& in, size_t depth, DecodeBudget& budget);
  // Forgets the reference tables and restores the budget, for the next message.
  void reset();

 private:
  friend class detail::Amf3Reader;
  struct Traits {
    std::string class_name;
    std::vector<std::string> sealed_names;
    bool dynamic = false;
  };

  DecodeLimits limits_;
  DecodeBudget budget_;
  std::vector<std::string> strings_;
  std::vector<Traits> traits_;
  size_t objects_ = 0;  // entries in the object table; their contents are never needed (rule 3)
};

// Writes AMF3. Repeated non-empty strings and the traits of anonymous or dynamic typed objects are
// sent as references. Objects are written with dynamic members, except that an object with an
// empty member name (which would end a dynamic member list) is written with sealed members.
// Integers outside the 29-bit range are written as doubles; texts longer than kAmf3MaxU29 bytes
// and array members with empty names cannot be expressed and are cut or dropped.
class Amf3Encoder {
 public:
  void encode(const Value& v, std::vector<uint8_t>& out);
  void reset();

 private:
  friend class detail::Amf3Writer;

  std::unordered_map<std::string, uint32_t> strings_;
  std::unordered_map<std::string, uint32_t> dynamic_traits_;  // by class name
  uint32_t trait_count_ = 0;
  // Marker of each object table entry, so a Reference is written with its object's marker.
  std::vector<uint8_t> object_markers_;
};

}  // namespace sluice::protocol::amf
