#include "protocol/amf3.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <string_view>
#include <utility>

namespace sluice::protocol::amf {

namespace {

using namespace amf3_marker;

constexpr size_t kDoubleBytes = 8;
constexpr size_t kVector32Bytes = 4;  // one element of Vector.<int> or Vector.<uint>
constexpr uint32_t kInlineFlag = 1;   // low bit of a U29 header: 1 = inline value, 0 = reference
// Object header bits once the inline flag is shifted out (AMF3 spec 3.12, U29O-traits).
constexpr uint32_t kInlineTraits = 0x01;    // 0 = the rest is a traits table index
constexpr uint32_t kExternalizable = 0x02;  // the class writes its own body
constexpr uint32_t kDynamic = 0x04;         // dynamic members follow the sealed ones
constexpr uint32_t kTraitsIndexShift = 1;
constexpr uint32_t kSealedCountShift = 3;
constexpr uint32_t kU29SignBit = 1u << 28;
constexpr uint32_t kU29Range = 1u << 29;
// Largest length or count that fits a U29 header after its flag bit.
constexpr uint32_t kMaxInlineCount = kAmf3MaxU29 >> 1;
// Largest traits index a traits reference header can carry.
constexpr uint32_t kMaxTraitIndex = kMaxInlineCount >> kTraitsIndexShift;

Error make_error(Errc code, std::string_view what, size_t at, std::string_view detail) {
  std::string ctx = "amf3 ";
  ctx += what;
  ctx += " at byte " + std::to_string(at);
  if (!detail.empty()) {
    ctx += ": ";
    ctx += detail;
  }
  return Error(code, std::move(ctx));
}

}  // namespace

namespace detail {

// Recursive-descent reader for one value; the decoder object owns the reference tables.
class Amf3Reader {
 public:
  Amf3Reader(Amf3Decoder& decoder, ByteReader& in, DecodeBudget& budget)
      : d_(decoder), in_(in), budget_(budget) {}

  Result<Value> value(size_t depth) {
    const size_t at = in_.position();
    if (in_.empty()) return make_error(Errc::Truncated, "value", at, "input ended before the marker");
    if (!budget_.spend_items(1)) return limit("value", at, "more values than max_items");
    const uint8_t marker = in_.u8();
    switch (marker) {
      case kUndefined: return Value::undefined();
      case kNull: return Value::null();
      case kFalse: return Value::boolean(false);
      case kTrue: return Value::boolean(true);
      case kInteger: return integer(at);
      case kDouble: return number(at);
      case kString: return string_value(at);
      case kXmlDocument:
      case kXml: return xml(at);
      case kDate: return date(at);
      case kArray: return array(depth, at);
      case kObject: return object(depth, at);
      case kByteArray: return byte_array(at);
      case kVectorInt:
      case kVectorUint:
      case kVectorDouble: return number_vector(marker, at);
      case kVectorObject: return object_vector(depth, at);
      case kDictionary: return dictionary(depth, at);
      default: return make_error(Errc::Malformed, "value", at, "unknown marker " + std::to_string(marker));
    }
  }

 private:
  using Traits = Amf3Decoder::Traits;

  // A complex value's U29 header: either a reference into the object table or an inline value.
  struct Header {
    bool reference = false;
    uint32_t value = 0;  // the index, or the header's bits after the inline flag
  };

  Error truncated(std::string_view what, size_t at, size_t need) const {
    return make_error(Errc::Truncated, what, at,
                      "needs " + std::to_string(need) + " bytes, " + std::to_string(in_.remaining()) + " remain");
  }
  static Error limit(std::string_view what, size_t at, std::string_view detail) {
    return make_error(Errc::LimitExceeded, what, at, detail);
  }

  // U29: up to three bytes of 7 bits with a continuation flag, then one byte of 8 bits.
  Result<uint32_t> u29(std::string_view what, size_t at) {
    constexpr int kSevenBitBytes = 3;
    constexpr uint8_t kMore = 0x80;
    uint32_t v = 0;
    for (int i = 0; i < kSevenBitBytes; ++i) {
      if (in_.empty()) return truncated(what, at, 1);
      const uint8_t b = in_.u8();
      v = (v << 7) | (b & 0x7F);
      if (!(b & kMore)) return v;
    }
    if (in_.empty()) return truncated(what, at, 1);
    return (v << 8) | in_.u8();
  }

  Result<Header> header(std::string_view what, size_t at) {
    auto h = u29(what, at);
    if (!h) return std::move(h).error();
    return Header{(*h & kInlineFlag) == 0, *h >> 1};
  }

  Result<Value> reference(uint32_t index, std::string_view what, size_t at) const {
    if (index >= d_.objects_) return make_error(Errc::Malformed, what, at, "reference to a missing object");
    return Value::reference(index);
  }

  // Every complex value takes an object table slot before its members decode, as the spec
  // numbers them, so later references count the same way the encoder does.
  Result<void> add_object(std::string_view what, size_t at) {
    if (d_.objects_ >= d_.limits_.max_items) return limit(what, at, "object table larger than max_items");
    ++d_.objects_;
    return ok();
  }

  Result<void> check_depth(size_t depth, std::string_view what, size_t at) const {
    if (depth >= d_.limits_.max_depth) return limit(what, at, "nested deeper than max_depth");
    return ok();
  }

  // Checks an inline length of text or bytes before anything is copied.
  Result<void> check_text(size_t len, std::string_view what, size_t at) {
    if (!in_.has(len)) return truncated(what, at, len);
    if (len > d_.limits_.max_string) return limit(what, at, "longer than max_string");
    if (!budget_.spend_bytes(len)) return limit(what, at, "more text than max_total_bytes");
    return ok();
  }

  // UTF-8-vr: an inline string (added to the string table unless empty) or a table reference.
  Result<std::string> text(std::string_view what, size_t at) {
    auto h = header(what, at);
    if (!h) return std::move(h).error();
    if (h->reference) {
      if (h->value >= d_.strings_.size()) return make_error(Errc::Malformed, what, at, "reference to a missing string");
      const std::string& s = d_.strings_[h->value];
      if (!budget_.spend_bytes(s.size())) return limit(what, at, "more text than max_total_bytes");
      return s;
    }
    if (auto c = check_text(h->value, what, at); !c) return std::move(c).error();
    std::string s(in_.string(h->value));
    if (!s.empty()) {
      if (d_.strings_.size() >= d_.limits_.max_items) return limit(what, at, "string table larger than max_items");
      d_.strings_.push_back(s);
    }
    return s;
  }

  Result<Value> integer(size_t at) {
    auto v = u29("integer", at);
    if (!v) return std::move(v).error();
    // Sign-extend the 29-bit two's complement value.
    const int64_t signed_value = (*v & kU29SignBit) ? int64_t(*v) - int64_t(kU29Range) : int64_t(*v);
    return Value::integer(static_cast<int32_t>(signed_value));
  }

  Result<Value> number(size_t at) {
    if (!in_.has(kDoubleBytes)) return truncated("double", at, kDoubleBytes);
    return Value::number(in_.f64be());
  }

  Result<Value> string_value(size_t at) {
    auto s = text("string", at);
    if (!s) return std::move(s).error();
    return Value::string(std::move(*s));
  }

  Result<Value> xml(size_t at) {
    auto h = header("xml", at);
    if (!h) return std::move(h).error();
    if (h->reference) return reference(h->value, "xml", at);
    if (auto c = check_text(h->value, "xml", at); !c) return std::move(c).error();
    if (auto a = add_object("xml", at); !a) return std::move(a).error();
    return Value::xml(std::string(in_.string(h->value)));
  }

  Result<Value> byte_array(size_t at) {
    auto h = header("byte array", at);
    if (!h) return std::move(h).error();
    if (h->reference) return reference(h->value, "byte array", at);
    if (auto c = check_text(h->value, "byte array", at); !c) return std::move(c).error();
    if (auto a = add_object("byte array", at); !a) return std::move(a).error();
    auto bytes = in_.bytes(h->value);
    return Value::byte_array(std::vector<uint8_t>(bytes.begin(), bytes.end()));
  }

  Result<Value> date(size_t at) {
    auto h = header("date", at);
    if (!h) return std::move(h).error();
    if (h->reference) return reference(h->value, "date", at);
    if (!in_.has(kDoubleBytes)) return truncated("date", at, kDoubleBytes);
    if (auto a = add_object("date", at); !a) return std::move(a).error();
    return Value::date(in_.f64be());
  }

  // Reads "name, value" pairs up to the empty name into props.
  Result<void> dynamic_members(Properties& props, size_t depth, std::string_view what) {
    for (;;) {
      auto name = text(what, in_.position());
      if (!name) return std::move(name).error();
      if (name->empty()) return ok();
      auto member = value(depth + 1);
      if (!member) return std::move(member).error();
      props.emplace_back(std::move(*name), std::move(*member));
    }
  }

  // Reads count values into items; count was checked against the input and the budget.
  Result<void> dense_values(std::vector<Value>& items, size_t count, size_t depth) {
    for (size_t i = 0; i < count; ++i) {
      auto item = value(depth + 1);
      if (!item) return std::move(item).error();
      items.push_back(std::move(*item));  // grows as values decode, never reserved from count
    }
    return ok();
  }

  // Each of count values takes at least min_bytes, so a larger count cannot be satisfied.
  Result<void> check_count(size_t count, size_t min_bytes, std::string_view what, size_t at) const {
    if (count > in_.remaining() / min_bytes) return truncated(what, at, count * min_bytes);
    if (count > budget_.items_left()) return limit(what, at, "more values than max_items");
    return ok();
  }

  Result<Value> array(size_t depth, size_t at) {
    auto h = header("array", at);
    if (!h) return std::move(h).error();
    if (h->reference) return reference(h->value, "array", at);
    if (auto c = check_depth(depth, "array", at); !c) return std::move(c).error();
    if (auto a = add_object("array", at); !a) return std::move(a).error();
    Properties assoc;
    if (auto m = dynamic_members(assoc, depth, "array key"); !m) return std::move(m).error();
    const size_t count = h->value;
    if (auto c = check_count(count, 1, "array", at); !c) return std::move(c).error();
    std::vector<Value> dense;
    if (auto r = dense_values(dense, count, depth); !r) return std::move(r).error();
    return Value::mixed_array(std::move(assoc), std::move(dense));
  }

  // Reads inline traits (bits = the object header after the inline flag) or finds referenced ones.
  Result<size_t> traits(uint32_t bits, size_t at) {
    if (!(bits & kInlineTraits)) {
      const size_t index = bits >> kTraitsIndexShift;
      if (index >= d_.traits_.size()) return make_error(Errc::Malformed, "object", at, "reference to missing traits");
      return index;
    }
    Traits t;
    auto name = text("class name", at);
    if (!name) return std::move(name).error();
    t.class_name = std::move(*name);
    if (bits & kExternalizable) {
      return make_error(Errc::Unsupported, "object", at, "externalizable class '" + t.class_name + "'");
    }
    t.dynamic = (bits & kDynamic) != 0;
    const size_t sealed = bits >> kSealedCountShift;
    if (sealed > in_.remaining()) return truncated("object traits", at, sealed);
    for (size_t i = 0; i < sealed; ++i) {
      auto member = text("sealed member name", in_.position());
      if (!member) return std::move(member).error();
      t.sealed_names.push_back(std::move(*member));
    }
    if (d_.traits_.size() >= d_.limits_.max_items) return limit("object", at, "traits table larger than max_items");
    d_.traits_.push_back(std::move(t));
    return d_.traits_.size() - 1;
  }

  Result<void> sealed_members(Properties& props, size_t traits_index, size_t depth, size_t at) {
    // By index: nested objects may add traits and move the table.
    const size_t count = d_.traits_[traits_index].sealed_names.size();
    if (auto c = check_count(count, 1, "object", at); !c) return std::move(c).error();
    for (size_t i = 0; i < count; ++i) {
      std::string name = d_.traits_[traits_index].sealed_names[i];
      if (!budget_.spend_bytes(name.size())) return limit("object", at, "more text than max_total_bytes");
      auto member = value(depth + 1);
      if (!member) return std::move(member).error();
      props.emplace_back(std::move(name), std::move(*member));
    }
    return ok();
  }

  Result<Value> object(size_t depth, size_t at) {
    auto h = header("object", at);
    if (!h) return std::move(h).error();
    if (h->reference) return reference(h->value, "object", at);
    if (auto c = check_depth(depth, "object", at); !c) return std::move(c).error();
    auto t = traits(h->value, at);
    if (!t) return std::move(t).error();
    if (auto a = add_object("object", at); !a) return std::move(a).error();
    const std::string& class_name = d_.traits_[*t].class_name;
    Value obj = class_name.empty() ? Value::object() : Value::typed_object(class_name, {});
    if (auto s = sealed_members(obj.properties(), *t, depth, at); !s) return std::move(s).error();
    if (d_.traits_[*t].dynamic) {
      if (auto m = dynamic_members(obj.properties(), depth, "member name"); !m) return std::move(m).error();
    }
    return obj;
  }

  Result<Value> number_vector(uint8_t marker, size_t at) {
    auto h = header("vector", at);
    if (!h) return std::move(h).error();
    if (h->reference) return reference(h->value, "vector", at);
    if (!in_.has(1)) return truncated("vector", at, 1);
    const bool fixed = in_.u8() != 0;
    const size_t count = h->value;
    const size_t width = marker == kVectorDouble ? kDoubleBytes : kVector32Bytes;
    if (auto c = check_count(count, width, "vector", at); !c) return std::move(c).error();
    if (auto a = add_object("vector", at); !a) return std::move(a).error();
    budget_.spend_items(count);
    std::vector<Value> items;
    for (size_t i = 0; i < count; ++i) {
      if (marker == kVectorInt) {
        items.push_back(Value::integer(static_cast<int32_t>(in_.u32be())));
      } else if (marker == kVectorUint) {
        items.push_back(Value::number(in_.u32be()));
      } else {
        items.push_back(Value::number(in_.f64be()));
      }
    }
    Value v = marker == kVectorInt    ? Value::vector_int({}, fixed)
              : marker == kVectorUint ? Value::vector_uint({}, fixed)
                                      : Value::vector_double({}, fixed);
    v.items() = std::move(items);
    return v;
  }

  Result<Value> object_vector(size_t depth, size_t at) {
    auto h = header("object vector", at);
    if (!h) return std::move(h).error();
    if (h->reference) return reference(h->value, "object vector", at);
    if (auto c = check_depth(depth, "object vector", at); !c) return std::move(c).error();
    if (!in_.has(1)) return truncated("object vector", at, 1);
    const bool fixed = in_.u8() != 0;
    auto type_name = text("vector type name", at);
    if (!type_name) return std::move(type_name).error();
    const size_t count = h->value;
    if (auto c = check_count(count, 1, "object vector", at); !c) return std::move(c).error();
    if (auto a = add_object("object vector", at); !a) return std::move(a).error();
    std::vector<Value> items;
    if (auto r = dense_values(items, count, depth); !r) return std::move(r).error();
    return Value::vector_object(std::move(*type_name), std::move(items), fixed);
  }

  Result<Value> dictionary(size_t depth, size_t at) {
    constexpr size_t kEntryMinBytes = 2;  // a key marker and a value marker
    auto h = header("dictionary", at);
    if (!h) return std::move(h).error();
    if (h->reference) return reference(h->value, "dictionary", at);
    if (auto c = check_depth(depth, "dictionary", at); !c) return std::move(c).error();
    if (!in_.has(1)) return truncated("dictionary", at, 1);
    const bool weak_keys = in_.u8() != 0;
    const size_t count = h->value;
    if (auto c = check_count(count, kEntryMinBytes, "dictionary", at); !c) return std::move(c).error();
    if (auto a = add_object("dictionary", at); !a) return std::move(a).error();
    Value dict = Value::dictionary({}, weak_keys);
    if (auto r = dense_values(dict.items(), count * 2, depth); !r) return std::move(r).error();
    return dict;
  }

  Amf3Decoder& d_;
  ByteReader& in_;
  DecodeBudget& budget_;
};

}  // namespace detail

Amf3Decoder::Amf3Decoder(const DecodeLimits& limits) : limits_(limits), budget_(limits) {}

Result<Value> Amf3Decoder::decode(ByteReader& in) { return decode(in, 0, budget_); }

Result<Value> Amf3Decoder::decode(ByteReader& in, size_t depth, DecodeBudget& budget) {
  return detail::Amf3Reader(*this, in, budget).value(depth);
}

void Amf3Decoder::reset() {
  budget_ = DecodeBudget(limits_);
  strings_.clear();
  traits_.clear();
  objects_ = 0;
}

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
      case Type::Number: w_.u8(kDouble); w_.f64be(v.as_number()); return;
      case Type::String: w_.u8(kString); text(v.as_string()); return;
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
