// JSON text written straight into a string, byte for byte what the stats API's
// nlohmann::json::dump(2, ' ', false, replace) (server/api_json.hpp) writes for the same values:
// two-space indentation, "key": value, strings escaped the same way (quote, backslash, control
// characters; UTF-8 as it is; invalid UTF-8 replaced by U+FFFD), integers as digits, floating-point
// numbers in nlohmann's shortest form ("1.5", "3.0", "1e+20"), infinities and NaN as null.
// For answers that are hot enough that building a tree first costs too much (GET /api/v1/streams,
// issue 16). Objects are written in the caller's order: to match a dumped nlohmann::json (whose
// objects are sorted maps), write the keys in sorted order.
#pragma once

#include <nlohmann/json.hpp>

#include <concepts>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace sluice::server {

// Appends s as a JSON string literal, quotes included.
void append_json_string(std::string& out, std::string_view s);

class JsonWriter {
 public:
  explicit JsonWriter(std::string& out) : out_(out) {}

  JsonWriter& begin_object() { return open('{', false); }
  JsonWriter& end_object() { return close('}'); }
  JsonWriter& begin_array() { return open('[', true); }
  JsonWriter& end_array() { return close(']'); }
  // An object member's name; its value is the next thing written.
  JsonWriter& key(std::string_view k);

  JsonWriter& string(std::string_view s) {
    before_value();
    append_json_string(out_, s);
    return *this;
  }
  JsonWriter& boolean(bool b) {
    before_value();
    out_ += b ? "true" : "false";
    return *this;
  }
  JsonWriter& null() {
    before_value();
    out_ += "null";
    return *this;
  }
  template <std::integral T>
  requires(!std::is_same_v<T, bool>) JsonWriter& number(T v) {
    if constexpr (std::is_signed_v<T>) return signed_number(v);
    return unsigned_number(v);
  }
  JsonWriter& number(double v);
  // Any nlohmann value, laid out as dump(2) would at this depth.
  JsonWriter& value(const nlohmann::json& j);

  // Shorthands for an object's member.
  JsonWriter& member_string(std::string_view k, std::string_view v) { return key(k).string(v); }
  JsonWriter& member_bool(std::string_view k, bool v) { return key(k).boolean(v); }
  template <typename T>
  JsonWriter& member_number(std::string_view k, T v) {
    return key(k).number(v);
  }
  JsonWriter& member_null(std::string_view k) { return key(k).null(); }

 private:
  struct Frame {
    bool array;
    bool empty;
  };
  JsonWriter& open(char c, bool array);
  JsonWriter& close(char c);
  JsonWriter& signed_number(int64_t v);
  JsonWriter& unsigned_number(uint64_t v);
  // A new line and the indentation before a member or an element of the innermost container.
  void next_item();
  void before_value() {
    if (after_key_) {
      after_key_ = false;
      return;
    }
    if (!stack_.empty()) next_item();
  }

  std::string& out_;
  std::vector<Frame> stack_;
  bool after_key_ = false;
};

}  // namespace sluice::server
