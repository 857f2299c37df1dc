// Value: one decoded AMF0 or AMF3 value, and the limits every AMF decoder enforces.
//
// One flat value type serves both encodings so that command and metadata code never cares which
// encoding a peer used. AMF3-only kinds (Integer, ByteArray, vectors, Dictionary) exist as types
// of their own so a decode -> encode round trip gives back the same value.
//
// References (AMF0 marker 0x07, AMF3 object references) are NOT resolved: they decode to
// Type::Reference holding the table index. Resolving by copying would let a few bytes of input
// expand into exponentially large trees (each object referring twice to the previous one), and
// real RTMP clients never send references in commands or metadata. The index refers to the
// reference table of the encoding context the value came from.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/result.hpp"

namespace sluice::protocol::amf {

enum class Type : uint8_t {
  Number,
  Boolean,
  String,  // AMF0 string and long string, AMF3 string
  Object,  // anonymous object (AMF3: empty class name)
  Null,
  Undefined,
  Reference,    // unresolved reference, see reference_index()
  EcmaArray,    // AMF0 ECMA array; AMF3 array with an associative part (dense part in items())
  StrictArray,  // AMF0 strict array; AMF3 array without an associative part
  Date,
  Xml,          // AMF0 XML document, AMF3 XMLDocument and XML
  TypedObject,  // object with a class name
  Unsupported,  // AMF0 "unsupported" marker
  // AMF3-only kinds.
  Integer,
  ByteArray,
  VectorInt,     // items() are Integer
  VectorUint,    // items() are Number (uint32 does not fit Integer)
  VectorDouble,  // items() are Number
  VectorObject,  // items() are any value; class_name() is the element type name
  Dictionary,    // items() alternate key, value, key, value...
};

class Value;
using Property = std::pair<std::string, Value>;
using Properties = std::vector<Property>;  // ordered: encoders keep insertion order

class Value {
 public:
  Value() = default;  // Undefined

  static Value number(double v);
  static Value boolean(bool v);
  static Value string(std::string s);
  static Value null();
  static Value undefined();
  static Value unsupported();
  static Value reference(uint32_t index);
  static Value object(Properties props = {});
  static Value ecma_array(Properties props = {});
  static Value strict_array(std::vector<Value> items);
  // The AMF3 array rule: StrictArray when assoc is empty, otherwise EcmaArray with both parts.
  static Value mixed_array(Properties assoc, std::vector<Value> dense);
  static Value date(double ms_since_epoch, int16_t tz = 0);
  static Value xml(std::string text);
  static Value typed_object(std::string class_name, Properties props);
  // AMF3-only kinds.
  static Value integer(int32_t v);
  static Value byte_array(std::vector<uint8_t> bytes);
  static Value vector_int(std::vector<int32_t> v, bool fixed = false);
  static Value vector_uint(std::vector<uint32_t> v, bool fixed = false);
  static Value vector_double(std::vector<double> v, bool fixed = false);
  static Value vector_object(std::string type_name, std::vector<Value> items, bool fixed = false);
  static Value dictionary(std::vector<std::pair<Value, Value>> entries, bool weak_keys = false);

  Type type() const { return type_; }
  bool is_number() const { return type_ == Type::Number || type_ == Type::Integer; }
  bool is_string() const { return type_ == Type::String; }
  bool is_boolean() const { return type_ == Type::Boolean; }
  bool is_null() const { return type_ == Type::Null; }
  bool is_undefined() const { return type_ == Type::Undefined; }
  // Object, EcmaArray or TypedObject: the kinds whose properties() are named members.
  bool is_object_like() const;
  bool is_array_like() const;  // StrictArray, EcmaArray, vectors: the kinds with items()

  double as_number(double fallback = 0) const;  // Number or Integer
  bool as_boolean(bool fallback = false) const;
  // The text of a String or Xml; an empty string for any other kind.
  const std::string& as_string() const;
  double date_ms() const { return type_ == Type::Date ? number_ : 0; }
  int16_t date_tz() const { return type_ == Type::Date ? tz_ : 0; }
  uint32_t reference_index() const { return type_ == Type::Reference ? static_cast<uint32_t>(int_) : 0; }
  int32_t integer_value() const { return type_ == Type::Integer ? static_cast<int32_t>(int_) : 0; }
  // TypedObject class name or VectorObject element type name; empty otherwise.
  const std::string& class_name() const;
  const std::vector<uint8_t>& bytes() const { return bytes_; }  // ByteArray contents
  bool fixed() const { return flag_ && type_ != Type::Boolean && type_ != Type::Dictionary; }
  bool weak_keys() const { return flag_ && type_ == Type::Dictionary; }
  // True when an AMF0 decoder read this value behind the 0x11 switch. AMF3 references count
  // objects from that switch, so the AMF0 encoder switches at the same value again to keep them
  // pointing where they did. Not part of equality: it records how, not what.
  bool came_from_amf3_switch() const { return amf3_switch_; }
  void mark_amf3_switch() { amf3_switch_ = true; }

  // Object-like lookup of the first member named key; nullptr when absent or not object-like.
  const Value* find(std::string_view key) const;
  std::string get_string(std::string_view key, std::string fallback = {}) const;
  double get_number(std::string_view key, double fallback = 0) const;
  // Object-like: replaces the first member named key, or appends. A no-op on other kinds.
  Value& set(std::string key, Value v);

  const Properties& properties() const { return props_; }
  Properties& properties() { return props_; }
  const std::vector<Value>& items() const { return items_; }
  std::vector<Value>& items() { return items_; }

  // Structural equality; NaN equals NaN so that decode -> encode -> decode compares equal.
  bool operator==(const Value& other) const;

  // JSON-ish text for logs and test failure output.
  std::string to_debug_string() const;

 private:
  explicit Value(Type t) : type_(t) {}

  Type type_ = Type::Undefined;
  bool flag_ = false;  // Boolean value, vector "fixed", dictionary "weak keys"
  bool amf3_switch_ = false;
  int16_t tz_ = 0;     // Date time zone in minutes (AMF0 only; AMF3 has none)
  int64_t int_ = 0;    // Integer value or Reference index
  double number_ = 0;  // Number value or Date milliseconds
  std::string str_;    // String / Xml text, TypedObject class name, VectorObject type name
  std::vector<uint8_t> bytes_;
  Properties props_;
  std::vector<Value> items_;
};

// Hard limits for decoding untrusted input. Each prevents one kind of resource attack.
struct DecodeLimits {
  // Nesting of containers; stops stack exhaustion by deeply nested objects.
  size_t max_depth = 64;
  // Values (and reference table entries) one decode may produce; bounds memory per message.
  size_t max_items = 1u << 20;
  // Length of one string, XML text or byte array.
  size_t max_string = 16u << 20;
  // Total bytes of strings, XML and byte arrays one decode may produce. AMF3 string references
  // copy a string for one byte of input, so without this a small message expands quadratically.
  size_t max_total_bytes = 64u << 20;
};

// What is left of DecodeLimits' totals while decoding one message. AMF0 and the AMF3 values it
// switches to spend the same budget.
class DecodeBudget {
 public:
  explicit DecodeBudget(const DecodeLimits& limits)
      : items_left_(limits.max_items), bytes_left_(limits.max_total_bytes) {}

  // Each returns false, spending nothing, when the allowance is exhausted.
  bool spend_items(size_t n) { return take(items_left_, n); }
  bool spend_bytes(size_t n) { return take(bytes_left_, n); }
  size_t items_left() const { return items_left_; }

 private:
  static bool take(size_t& left, size_t n) {
    if (n > left) return false;
    left -= n;
    return true;
  }
  size_t items_left_;
  size_t bytes_left_;
};

// A decoding error as every AMF decoder words it: "<encoding> <what> at byte <at>[: <detail>]".
Error decode_error(std::string_view encoding, Errc code, std::string_view what, size_t at, std::string_view detail);

}  // namespace sluice::protocol::amf
