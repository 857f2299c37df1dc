#include "protocol/amf0.hpp"

#include <limits>
#include <string>
#include <utility>

#include "protocol/amf3.hpp"

namespace sluice::protocol::amf {

namespace {

using namespace amf0_marker;

constexpr size_t kShortLengthBytes = 2;  // u16 length of strings, member and class names
constexpr size_t kLongLengthBytes = 4;   // u32 length of long strings and XML documents
constexpr size_t kNumberBytes = 8;
constexpr size_t kDateBytes = 10;  // double milliseconds + s16 time zone
constexpr size_t kMaxShortString = std::numeric_limits<uint16_t>::max();
constexpr size_t kMaxLongString = std::numeric_limits<uint32_t>::max();

Error make_error(Errc code, std::string_view what, size_t at, std::string_view detail) {
  return decode_error("amf0", code, what, at, detail);
}

// Recursive-descent reader for one value and everything nested in it.
class Amf0Reader {
 public:
  Amf0Reader(ByteReader& in, const DecodeLimits& limits, DecodeBudget& budget)
      : in_(in), limits_(limits), budget_(budget) {}

  Result<Value> value(size_t depth) {
    const size_t at = in_.position();
    if (in_.empty()) return make_error(Errc::Truncated, "value", at, "input ended before the marker");
    if (!budget_.spend_items(1)) return limit(at, "more values than max_items");
    const uint8_t marker = in_.u8();
    switch (marker) {
      case kNumber: return number(at);
      case kBoolean: return boolean(at);
      case kString: return string_value(kShortLengthBytes, at);
      case kLongString: return string_value(kLongLengthBytes, at);
      case kObject: return object_like(Value::object(), depth, at);
      case kEcmaArray: return ecma_array(depth, at);
      case kTypedObject: return typed_object(depth, at);
      case kStrictArray: return strict_array(depth, at);
      case kNull: return Value::null();
      case kUndefined: return Value::undefined();
      case kUnsupported: return Value::unsupported();
      case kReference: return reference(at);
      case kDate: return date(at);
      case kXmlDocument: return xml(at);
      case kSwitchToAmf3: return amf3_value(depth);
      case kMovieClip: return make_error(Errc::Unsupported, "movieclip", at, "reserved marker 0x04");
      case kRecordSet: return make_error(Errc::Unsupported, "recordset", at, "reserved marker 0x0e");
      case kObjectEnd: return make_error(Errc::Malformed, "value", at, "object-end marker outside an object");
      default: return make_error(Errc::Malformed, "value", at, "unknown marker " + std::to_string(marker));
    }
  }

 private:
  Error truncated(std::string_view what, size_t at, size_t need) const {
    return make_error(Errc::Truncated, what, at,
                      "needs " + std::to_string(need) + " bytes, " + std::to_string(in_.remaining()) + " remain");
  }
  static Error limit(size_t at, std::string_view detail) {
    return make_error(Errc::LimitExceeded, "value", at, detail);
  }

  Result<Value> amf3_value(size_t depth) {
    auto v = Amf3Decoder(limits_).decode(in_, depth, budget_);
    if (v) v->mark_amf3_switch();
    return v;
  }

  Result<Value> number(size_t at) {
    if (!in_.has(kNumberBytes)) return truncated("number", at, kNumberBytes);
    return Value::number(in_.f64be());
  }

  Result<Value> boolean(size_t at) {
    if (!in_.has(1)) return truncated("boolean", at, 1);
    return Value::boolean(in_.u8() != 0);
  }

  Result<Value> reference(size_t at) {
    if (!in_.has(2)) return truncated("reference", at, 2);
    return Value::reference(in_.u16be());
  }

  Result<Value> date(size_t at) {
    if (!in_.has(kDateBytes)) return truncated("date", at, kDateBytes);
    const double ms = in_.f64be();
    return Value::date(ms, static_cast<int16_t>(in_.u16be()));
  }

  // Reads a length prefix of length_bytes (2 or 4) and that many bytes of text.
  Result<std::string> text(size_t length_bytes, std::string_view what, size_t at) {
    if (!in_.has(length_bytes)) return truncated(what, at, length_bytes);
    const size_t len = length_bytes == kShortLengthBytes ? in_.u16be() : in_.u32be();
    if (!in_.has(len)) return truncated(what, at, len);
    if (len > limits_.max_string) return make_error(Errc::LimitExceeded, what, at, "longer than max_string");
    if (!budget_.spend_bytes(len)) return make_error(Errc::LimitExceeded, what, at, "more text than max_total_bytes");
    return std::string(in_.string(len));
  }

  Result<Value> string_value(size_t length_bytes, size_t at) {
    auto s = text(length_bytes, length_bytes == kShortLengthBytes ? "string" : "long string", at);
    if (!s) return std::move(s).error();
    return Value::string(std::move(*s));
  }

  Result<Value> xml(size_t at) {
    auto s = text(kLongLengthBytes, "xml document", at);
    if (!s) return std::move(s).error();
    return Value::xml(std::move(*s));
  }

  Result<Value> ecma_array(size_t depth, size_t at) {
    // The count is a hint only (rule 4): encoders get it wrong, and it must not size anything.
    if (!in_.has(kLongLengthBytes)) return truncated("ecma array", at, kLongLengthBytes);
    in_.skip(kLongLengthBytes);
    return object_like(Value::ecma_array(), depth, at);
  }

  Result<Value> typed_object(size_t depth, size_t at) {
    auto name = text(kShortLengthBytes, "typed object class name", at);
    if (!name) return std::move(name).error();
    return object_like(Value::typed_object(std::move(*name), {}), depth, at);
  }

  // Returns true when the input is at an object end: 00 00 09, or its accepted truncations.
  bool at_object_end() {
    auto rest = in_.rest();
    if (rest.empty()) return true;  // rule 3: ended where a member name would start
    if (rest.size() < kShortLengthBytes || rest[0] != 0 || rest[1] != 0) return false;
    if (rest.size() == kShortLengthBytes) return in_.skip(kShortLengthBytes);  // rule 3: 0x09 missing
    if (rest[2] != kObjectEnd) return false;                                   // an empty member name, not the end
    return in_.skip(kShortLengthBytes + 1);
  }

  // Reads "name, value" members up to the terminator into container.
  Result<Value> object_like(Value container, size_t depth, size_t at) {
    if (depth >= limits_.max_depth) return limit(at, "nested deeper than max_depth");
    while (!at_object_end()) {
      auto name = text(kShortLengthBytes, "member name", in_.position());
      if (!name) return std::move(name).error();
      auto member = value(depth + 1);
      if (!member) return std::move(member).error();
      container.properties().emplace_back(std::move(*name), std::move(*member));
    }
    return container;
  }

  Result<Value> strict_array(size_t depth, size_t at) {
    if (depth >= limits_.max_depth) return limit(at, "nested deeper than max_depth");
    if (!in_.has(kLongLengthBytes)) return truncated("strict array", at, kLongLengthBytes);
    const size_t count = in_.u32be();
    // Every value takes at least its marker byte, so a larger count cannot be satisfied.
    if (count > in_.remaining()) return truncated("strict array", at, count);
    if (count > budget_.items_left()) return limit(at, "more values than max_items");
    std::vector<Value> items;  // grows as values decode; never reserved from the declared count
    for (size_t i = 0; i < count; ++i) {
      auto item = value(depth + 1);
      if (!item) return std::move(item).error();
      items.push_back(std::move(*item));
    }
    return Value::strict_array(std::move(items));
  }

  ByteReader& in_;
  const DecodeLimits& limits_;
  DecodeBudget& budget_;
};

// --- Encoding ---

bool props_fit_amf0(const Properties& props) {
  for (const auto& [name, value] : props) {
    if (name.size() > kMaxShortString) return false;
  }
  return true;
}

// True when v itself (not its members) has no exact AMF0 form and must go behind the 0x11 switch.
bool needs_amf3(const Value& v) {
  switch (v.type()) {
    case Type::Integer:
    case Type::ByteArray:
    case Type::VectorInt:
    case Type::VectorUint:
    case Type::VectorDouble:
    case Type::VectorObject:
    case Type::Dictionary: return true;
    case Type::EcmaArray: return !v.items().empty() || !props_fit_amf0(v.properties());
    case Type::Object: return !props_fit_amf0(v.properties());
    case Type::TypedObject: return v.class_name().size() > kMaxShortString || !props_fit_amf0(v.properties());
    case Type::String: return v.as_string().size() > kMaxLongString;
    case Type::Xml: return v.as_string().size() > kMaxLongString;
    default: return false;
  }
}

void write_short_text(ByteWriter& w, std::string_view s) {
  w.u16be(static_cast<uint16_t>(s.size()));
  w.string(s);
}

void write_long_text(ByteWriter& w, std::string_view s) {
  w.u32be(static_cast<uint32_t>(s.size()));
  w.string(s);
}

void write_members(const Properties& props, std::vector<uint8_t>& out) {
  ByteWriter w(out);
  for (const auto& [name, value] : props) {
    write_short_text(w, name);
    encode_amf0(value, out);
  }
  w.u16be(0);
  w.u8(kObjectEnd);
}

void write_strict_array(const Value& v, std::vector<uint8_t>& out) {
  ByteWriter w(out);
  w.u8(kStrictArray);
  w.u32be(static_cast<uint32_t>(v.items().size()));
  for (const auto& item : v.items()) encode_amf0(item, out);
}

void write_string(ByteWriter& w, const std::string& s) {
  if (s.size() <= kMaxShortString) {
    w.u8(kString);
    write_short_text(w, s);
  } else {
    w.u8(kLongString);
    write_long_text(w, s);
  }
}

void write_reference(ByteWriter& w, uint32_t index) {
  if (index > kMaxShortString) {
    w.u8(kUndefined);  // documented in amf0.hpp: AMF0 has no way to express it
    return;
  }
  w.u8(kReference);
  w.u16be(static_cast<uint16_t>(index));
}

// Writes the kinds whose members are written recursively.
void write_container(const Value& v, std::vector<uint8_t>& out) {
  ByteWriter w(out);
  switch (v.type()) {
    case Type::Object: w.u8(kObject); break;
    case Type::EcmaArray:
      w.u8(kEcmaArray);
      w.u32be(static_cast<uint32_t>(v.properties().size()));
      break;
    case Type::TypedObject:
      w.u8(kTypedObject);
      write_short_text(w, v.class_name());
      break;
    default: write_strict_array(v, out); return;
  }
  write_members(v.properties(), out);
}

}  // namespace

Result<Value> decode_amf0(ByteReader& in, const DecodeLimits& limits, DecodeBudget& budget) {
  return Amf0Reader(in, limits, budget).value(0);
}

Result<Value> decode_amf0(ByteReader& in, const DecodeLimits& limits) {
  DecodeBudget budget(limits);
  return decode_amf0(in, limits, budget);
}

Result<std::vector<Value>> decode_amf0_all(std::span<const uint8_t> bytes, const DecodeLimits& limits) {
  ByteReader in(bytes);
  DecodeBudget budget(limits);
  std::vector<Value> values;
  while (!in.empty()) {
    auto v = decode_amf0(in, limits, budget);
    if (!v) return std::move(v).error();
    values.push_back(std::move(*v));
  }
  return values;
}

void encode_amf0(const Value& v, std::vector<uint8_t>& out) {
  ByteWriter w(out);
  if (needs_amf3(v) || v.came_from_amf3_switch()) {
    w.u8(kSwitchToAmf3);
    Amf3Encoder().encode(v, out);  // fresh tables, matching the decoder's rule 6
    return;
  }
  switch (v.type()) {
    case Type::Number:
      w.u8(kNumber);
      w.f64be(v.as_number());
      return;
    case Type::Boolean:
      w.u8(kBoolean);
      w.u8(v.as_boolean() ? 1 : 0);
      return;
    case Type::String: write_string(w, v.as_string()); return;
    case Type::Null: w.u8(kNull); return;
    case Type::Undefined: w.u8(kUndefined); return;
    case Type::Unsupported: w.u8(kUnsupported); return;
    case Type::Reference: write_reference(w, v.reference_index()); return;
    case Type::Date:
      w.u8(kDate);
      w.f64be(v.date_ms());
      w.u16be(static_cast<uint16_t>(v.date_tz()));
      return;
    case Type::Xml:
      w.u8(kXmlDocument);
      write_long_text(w, v.as_string());
      return;
    case Type::Object:
    case Type::EcmaArray:
    case Type::TypedObject:
    case Type::StrictArray: write_container(v, out); return;
    default: w.u8(kUndefined); return;  // unreachable: needs_amf3() took the AMF3-only kinds
  }
}

}  // namespace sluice::protocol::amf
