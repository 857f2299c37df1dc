#include "protocol/amf3.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <string_view>
#include <utility>

#include "protocol/amf3_wire.hpp"

namespace sluice::protocol::amf {

namespace {

using namespace amf3_marker;
using namespace amf3_wire;

Error make_error(Errc code, std::string_view what, size_t at, std::string_view detail) {
  return decode_error("amf3", code, what, at, detail);
}

}  // namespace

namespace detail {

// Recursive-descent reader for one value; the decoder object owns the reference tables.
class Amf3Reader {
 public:
  Amf3Reader(Amf3Decoder& decoder, ByteReader& in, DecodeBudget& budget) : d_(decoder), in_(in), budget_(budget) {}

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

}  // namespace sluice::protocol::amf
