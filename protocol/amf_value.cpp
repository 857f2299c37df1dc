#include "protocol/amf_value.hpp"

#include <charconv>
#include <cmath>

namespace sluice::protocol::amf {

namespace {

const std::string kEmptyString;

// Debug output of a byte array shows this many bytes, then "...".
constexpr size_t kDebugBytesShown = 16;

bool same_number(double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); }

void append_number(std::string& out, double v) {
  if (std::isnan(v)) {
    out += "NaN";
    return;
  }
  if (std::isinf(v)) {
    out += v < 0 ? "-Infinity" : "Infinity";
    return;
  }
  char buf[32];
  auto res = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, res.ptr);
}

void append_quoted(std::string& out, std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += '"';
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      out += "\\u00";
      out += kHex[c >> 4];
      out += kHex[c & 0xF];
    } else {
      out += static_cast<char>(c);
    }
  }
  out += '"';
}

void append_value(std::string& out, const Value& v);

void append_items(std::string& out, const std::vector<Value>& items) {
  out += '[';
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out += ", ";
    append_value(out, items[i]);
  }
  out += ']';
}

void append_props(std::string& out, const Properties& props) {
  out += '{';
  for (size_t i = 0; i < props.size(); ++i) {
    if (i) out += ", ";
    append_quoted(out, props[i].first);
    out += ": ";
    append_value(out, props[i].second);
  }
  out += '}';
}

void append_dictionary(std::string& out, const Value& v) {
  out += v.weak_keys() ? "dict(weak){" : "dict{";
  const auto& items = v.items();
  for (size_t i = 0; i + 1 < items.size(); i += 2) {
    if (i) out += ", ";
    append_value(out, items[i]);
    out += ": ";
    append_value(out, items[i + 1]);
  }
  out += '}';
}

void append_bytes(std::string& out, const std::vector<uint8_t>& bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += "bytes(" + std::to_string(bytes.size()) + ":";
  for (size_t i = 0; i < bytes.size() && i < kDebugBytesShown; ++i) {
    out += kHex[bytes[i] >> 4];
    out += kHex[bytes[i] & 0xF];
  }
  if (bytes.size() > kDebugBytesShown) out += "...";
  out += ')';
}

void append_vector(std::string& out, const char* name, const Value& v) {
  out += name;
  if (!v.class_name().empty()) out += "<" + v.class_name() + ">";
  if (v.fixed()) out += "(fixed)";
  append_items(out, v.items());
}

void append_value(std::string& out, const Value& v) {
  switch (v.type()) {
    case Type::Number: append_number(out, v.as_number()); return;
    case Type::Integer: out += std::to_string(v.integer_value()) + "i"; return;
    case Type::Boolean: out += v.as_boolean() ? "true" : "false"; return;
    case Type::String: append_quoted(out, v.as_string()); return;
    case Type::Null: out += "null"; return;
    case Type::Undefined: out += "undefined"; return;
    case Type::Unsupported: out += "unsupported"; return;
    case Type::Reference: out += "ref(" + std::to_string(v.reference_index()) + ")"; return;
    case Type::Object: append_props(out, v.properties()); return;
    case Type::TypedObject:
      out += v.class_name();
      append_props(out, v.properties());
      return;
    case Type::EcmaArray:
      out += "ecma";
      if (!v.items().empty()) append_items(out, v.items());
      append_props(out, v.properties());
      return;
    case Type::StrictArray: append_items(out, v.items()); return;
    case Type::Date:
      out += "date(";
      append_number(out, v.date_ms());
      out += ", tz " + std::to_string(v.date_tz()) + ")";
      return;
    case Type::Xml:
      out += "xml(";
      append_quoted(out, v.as_string());
      out += ')';
      return;
    case Type::ByteArray: append_bytes(out, v.bytes()); return;
    case Type::VectorInt: append_vector(out, "vector<int>", v); return;
    case Type::VectorUint: append_vector(out, "vector<uint>", v); return;
    case Type::VectorDouble: append_vector(out, "vector<double>", v); return;
    case Type::VectorObject: append_vector(out, "vector", v); return;
    case Type::Dictionary: append_dictionary(out, v); return;
  }
  out += "?";
}

}  // namespace

Value Value::number(double v) {
  Value out(Type::Number);
  out.number_ = v;
  return out;
}

Value Value::boolean(bool v) {
  Value out(Type::Boolean);
  out.flag_ = v;
  return out;
}

Value Value::string(std::string s) {
  Value out(Type::String);
  out.str_ = std::move(s);
  return out;
}

Value Value::null() { return Value(Type::Null); }
Value Value::undefined() { return Value(Type::Undefined); }
Value Value::unsupported() { return Value(Type::Unsupported); }

Value Value::reference(uint32_t index) {
  Value out(Type::Reference);
  out.int_ = index;
  return out;
}

Value Value::object(Properties props) {
  Value out(Type::Object);
  out.props_ = std::move(props);
  return out;
}

Value Value::ecma_array(Properties props) {
  Value out(Type::EcmaArray);
  out.props_ = std::move(props);
  return out;
}

Value Value::strict_array(std::vector<Value> items) {
  Value out(Type::StrictArray);
  out.items_ = std::move(items);
  return out;
}

Value Value::mixed_array(Properties assoc, std::vector<Value> dense) {
  Value out(assoc.empty() ? Type::StrictArray : Type::EcmaArray);
  out.props_ = std::move(assoc);
  out.items_ = std::move(dense);
  return out;
}

Value Value::date(double ms_since_epoch, int16_t tz) {
  Value out(Type::Date);
  out.number_ = ms_since_epoch;
  out.tz_ = tz;
  return out;
}

Value Value::xml(std::string text) {
  Value out(Type::Xml);
  out.str_ = std::move(text);
  return out;
}

Value Value::typed_object(std::string class_name, Properties props) {
  Value out(Type::TypedObject);
  out.str_ = std::move(class_name);
  out.props_ = std::move(props);
  return out;
}

Value Value::integer(int32_t v) {
  Value out(Type::Integer);
  out.int_ = v;
  return out;
}

Value Value::byte_array(std::vector<uint8_t> bytes) {
  Value out(Type::ByteArray);
  out.bytes_ = std::move(bytes);
  return out;
}

Value Value::vector_int(std::vector<int32_t> v, bool fixed) {
  Value out(Type::VectorInt);
  out.flag_ = fixed;
  for (int32_t x : v) out.items_.push_back(integer(x));
  return out;
}

Value Value::vector_uint(std::vector<uint32_t> v, bool fixed) {
  Value out(Type::VectorUint);
  out.flag_ = fixed;
  for (uint32_t x : v) out.items_.push_back(number(x));
  return out;
}

Value Value::vector_double(std::vector<double> v, bool fixed) {
  Value out(Type::VectorDouble);
  out.flag_ = fixed;
  for (double x : v) out.items_.push_back(number(x));
  return out;
}

Value Value::vector_object(std::string type_name, std::vector<Value> items, bool fixed) {
  Value out(Type::VectorObject);
  out.flag_ = fixed;
  out.str_ = std::move(type_name);
  out.items_ = std::move(items);
  return out;
}

Value Value::dictionary(std::vector<std::pair<Value, Value>> entries, bool weak_keys) {
  Value out(Type::Dictionary);
  out.flag_ = weak_keys;
  for (auto& [key, value] : entries) {
    out.items_.push_back(std::move(key));
    out.items_.push_back(std::move(value));
  }
  return out;
}

bool Value::is_object_like() const {
  return type_ == Type::Object || type_ == Type::EcmaArray || type_ == Type::TypedObject;
}

bool Value::is_array_like() const {
  switch (type_) {
    case Type::StrictArray:
    case Type::EcmaArray:
    case Type::VectorInt:
    case Type::VectorUint:
    case Type::VectorDouble:
    case Type::VectorObject: return true;
    default: return false;
  }
}

double Value::as_number(double fallback) const {
  if (type_ == Type::Number) return number_;
  if (type_ == Type::Integer) return static_cast<double>(int_);
  return fallback;
}

bool Value::as_boolean(bool fallback) const { return type_ == Type::Boolean ? flag_ : fallback; }

const std::string& Value::as_string() const {
  return (type_ == Type::String || type_ == Type::Xml) ? str_ : kEmptyString;
}

const std::string& Value::class_name() const {
  return (type_ == Type::TypedObject || type_ == Type::VectorObject) ? str_ : kEmptyString;
}

const Value* Value::find(std::string_view key) const {
  if (!is_object_like()) return nullptr;
  for (const auto& [name, value] : props_) {
    if (name == key) return &value;
  }
  return nullptr;
}

std::string Value::get_string(std::string_view key, std::string fallback) const {
  const Value* v = find(key);
  return (v && v->is_string()) ? v->str_ : fallback;
}

double Value::get_number(std::string_view key, double fallback) const {
  const Value* v = find(key);
  return v ? v->as_number(fallback) : fallback;
}

Value& Value::set(std::string key, Value v) {
  if (!is_object_like()) return *this;
  for (auto& [name, value] : props_) {
    if (name == key) {
      value = std::move(v);
      return *this;
    }
  }
  props_.emplace_back(std::move(key), std::move(v));
  return *this;
}

bool Value::operator==(const Value& o) const {
  return type_ == o.type_ && flag_ == o.flag_ && tz_ == o.tz_ && int_ == o.int_ && same_number(number_, o.number_) &&
         str_ == o.str_ && bytes_ == o.bytes_ && props_ == o.props_ && items_ == o.items_;
}

std::string Value::to_debug_string() const {
  std::string out;
  append_value(out, *this);
  return out;
}

Error decode_error(std::string_view encoding, Errc code, std::string_view what, size_t at, std::string_view detail) {
  std::string ctx(encoding);
  ctx += ' ';
  ctx += what;
  ctx += " at byte " + std::to_string(at);
  if (!detail.empty()) {
    ctx += ": ";
    ctx += detail;
  }
  return Error(code, std::move(ctx));
}

}  // namespace sluice::protocol::amf
