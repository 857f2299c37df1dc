// AMF3 encoding (the decoder is amf3.cpp).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <string_view>
#include <utility>

#include "protocol/amf3.hpp"
#include "protocol/amf3_wire.hpp"

namespace sluice::protocol::amf {

namespace {
using namespace amf3_marker;
using namespace amf3_wire;
}  // namespace

namespace detail {

// Writes one value and everything nested in it; the encoder object owns the reference tables.
class Amf3Writer {
 public:
  Amf3Writer(Amf3Encoder& encoder, std::vector<uint8_t>& out) : e_(encoder), w_(out) {}

  void value(const Value& v) {
    switch (v.type()) {
      case Type::Undefined:
      case Type::Unsupported: w_.u8(kUndefined); return;  // AMF3 has no "unsupported"
      case Type::Null: w_.u8(kNull); return;
      case Type::Boolean: w_.u8(v.as_boolean() ? kTrue : kFalse); return;
      case Type::Integer: integer(v.integer_value()); return;
      case Type::Number:
        w_.u8(kDouble);
        w_.f64be(v.as_number());
        return;
      case Type::String:
        w_.u8(kString);
        text(v.as_string());
        return;
      case Type::Reference: reference(v.reference_index()); return;
      case Type::Date: date(v); return;
      case Type::Xml: inline_bytes(kXmlDocument, as_bytes(v.as_string())); return;
      case Type::ByteArray: inline_bytes(kByteArray, v.bytes()); return;
      case Type::StrictArray:
      case Type::EcmaArray: array(v); return;
      case Type::Object:
      case Type::TypedObject: object(v); return;
      case Type::VectorInt:
      case Type::VectorUint:
      case Type::VectorDouble: number_vector(v); return;
      case Type::VectorObject: object_vector(v); return;
      case Type::Dictionary: dictionary(v); return;
    }
    w_.u8(kUndefined);
  }

 private:
  static std::span<const uint8_t> as_bytes(const std::string& s) {
    return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
  }

  void u29(uint32_t v) {
    v &= kAmf3MaxU29;
    if (v < 0x80) {
      w_.u8(static_cast<uint8_t>(v));
    } else if (v < 0x4000) {
      w_.u8(static_cast<uint8_t>(0x80 | (v >> 7)));
      w_.u8(static_cast<uint8_t>(v & 0x7F));
    } else if (v < 0x200000) {
      w_.u8(static_cast<uint8_t>(0x80 | (v >> 14)));
      w_.u8(static_cast<uint8_t>(0x80 | ((v >> 7) & 0x7F)));
      w_.u8(static_cast<uint8_t>(v & 0x7F));
    } else {
      w_.u8(static_cast<uint8_t>(0x80 | (v >> 22)));
      w_.u8(static_cast<uint8_t>(0x80 | ((v >> 15) & 0x7F)));
      w_.u8(static_cast<uint8_t>(0x80 | ((v >> 8) & 0x7F)));
      w_.u8(static_cast<uint8_t>(v & 0xFF));
    }
  }

  // An inline header: a length, count or bit set followed by the inline flag.
  void inline_header(size_t value) {
    u29((static_cast<uint32_t>(std::min<size_t>(value, kMaxInlineCount)) << 1) | kInlineFlag);
  }

  static size_t capped(size_t n) { return std::min<size_t>(n, kMaxInlineCount); }

  void integer(int32_t v) {
    if (v < kAmf3MinInteger || v > kAmf3MaxInteger) {
      w_.u8(kDouble);
      w_.f64be(v);
      return;
    }
    w_.u8(kInteger);
    u29(static_cast<uint32_t>(v) & kAmf3MaxU29);  // 29-bit two's complement
  }

  // UTF-8-vr: a reference when the string was sent before; the empty string is never tabled.
  void text(std::string_view s) {
    if (!s.empty()) {
      auto it = e_.strings_.find(std::string(s));
      if (it != e_.strings_.end()) {
        u29(it->second << 1);
        return;
      }
      if (e_.strings_.size() < kMaxInlineCount) {
        e_.strings_.emplace(std::string(s), static_cast<uint32_t>(e_.strings_.size()));
      }
    }
    const size_t len = capped(s.size());
    inline_header(len);
    w_.string(s.substr(0, len));
  }

  // Takes an object table slot, in the same order the decoder numbers them.
  void add_object(uint8_t marker) {
    w_.u8(marker);
    e_.object_markers_.push_back(marker);
  }

  void reference(uint32_t index) {
    if (index > kMaxInlineCount) {
      w_.u8(kUndefined);  // cannot be expressed; the decoder never produces one
      return;
    }
    w_.u8(index < e_.object_markers_.size() ? e_.object_markers_[index] : kObject);
    u29(index << 1);
  }

  void date(const Value& v) {
    add_object(kDate);
    inline_header(0);
    w_.f64be(v.date_ms());
  }

  void inline_bytes(uint8_t marker, std::span<const uint8_t> bytes) {
    add_object(marker);
    const size_t len = capped(bytes.size());
    inline_header(len);
    w_.bytes(bytes.first(len));
  }

  void items(const std::vector<Value>& values, size_t count) {
    for (size_t i = 0; i < count; ++i) value(values[i]);
  }

  void array(const Value& v) {
    add_object(kArray);
    const size_t count = capped(v.items().size());
    inline_header(count);
    for (const auto& [name, member] : v.properties()) {
      if (name.empty()) continue;  // an empty name ends the associative part: not expressible
      text(name);
      value(member);
    }
    text("");
    items(v.items(), count);
  }

  static bool has_empty_name(const Properties& props) {
    for (const auto& member : props) {
      if (member.first.empty()) return true;
    }
    return false;
  }

  void object(const Value& v) {
    add_object(kObject);
    if (has_empty_name(v.properties())) {
      sealed_object(v);
      return;
    }
    const std::string& class_name = v.class_name();
    auto it = e_.dynamic_traits_.find(class_name);
    if (it != e_.dynamic_traits_.end()) {
      inline_header(it->second << kTraitsIndexShift);
    } else {
      if (e_.trait_count_ < kMaxTraitIndex) e_.dynamic_traits_.emplace(class_name, e_.trait_count_);
      ++e_.trait_count_;
      inline_header(kInlineTraits | kDynamic);
      text(class_name);
    }
    for (const auto& [name, member] : v.properties()) {
      text(name);
      value(member);
    }
    text("");
  }

  // Sealed members allow empty names; the traits are sent inline and take a table slot.
  void sealed_object(const Value& v) {
    constexpr size_t kMaxSealed = kMaxInlineCount >> kSealedCountShift;
    const size_t count = std::min(v.properties().size(), kMaxSealed);
    ++e_.trait_count_;
    inline_header((count << kSealedCountShift) | kInlineTraits);
    text(v.class_name());
    for (size_t i = 0; i < count; ++i) text(v.properties()[i].first);
    for (size_t i = 0; i < count; ++i) value(v.properties()[i].second);
  }

  // Converts to int32 without undefined behaviour for NaN or out-of-range doubles.
  static int64_t saturate(double d, double lo, double hi) {
    if (std::isnan(d)) return 0;
    return static_cast<int64_t>(std::clamp(d, lo, hi));
  }

  void number_vector(const Value& v) {
    const uint8_t marker = v.type() == Type::VectorInt    ? kVectorInt
                           : v.type() == Type::VectorUint ? kVectorUint
                                                          : kVectorDouble;
    add_object(marker);
    const size_t count = capped(v.items().size());
    inline_header(count);
    w_.u8(v.fixed() ? 1 : 0);
    for (size_t i = 0; i < count; ++i) {
      const double d = v.items()[i].as_number();
      if (marker == kVectorInt) {
        w_.u32be(static_cast<uint32_t>(saturate(d, INT32_MIN, INT32_MAX)));
      } else if (marker == kVectorUint) {
        w_.u32be(static_cast<uint32_t>(saturate(d, 0, UINT32_MAX)));
      } else {
        w_.f64be(d);
      }
    }
  }

  void object_vector(const Value& v) {
    add_object(kVectorObject);
    const size_t count = capped(v.items().size());
    inline_header(count);
    w_.u8(v.fixed() ? 1 : 0);
    text(v.class_name());
    items(v.items(), count);
  }

  void dictionary(const Value& v) {
    add_object(kDictionary);
    const size_t entries = capped(v.items().size() / 2);
    inline_header(entries);
    w_.u8(v.weak_keys() ? 1 : 0);
    items(v.items(), entries * 2);
  }

  Amf3Encoder& e_;
  ByteWriter w_;
};

}  // namespace detail

void Amf3Encoder::encode(const Value& v, std::vector<uint8_t>& out) { detail::Amf3Writer(*this, out).value(v); }

void Amf3Encoder::reset() {
  strings_.clear();
  dynamic_traits_.clear();
  trait_count_ = 0;
  object_markers_.clear();
}

}  // namespace sluice::protocol::amf
