// AMF3 tests. Every byte vector here was written by hand from the AMF3 specification
// (docs/protocol.md, "AMF3"), never produced by our encoder.
#include <doctest/doctest.h>

#include <cstdint>
#include <initializer_list>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/amf0.hpp"
#include "protocol/amf3.hpp"

namespace sluice::protocol::amf {
// Lets doctest print values in failed checks.
std::ostream& operator<<(std::ostream& os, const Value& v) { return os << v.to_debug_string(); }
}  // namespace sluice::protocol::amf

using namespace sluice;
using namespace sluice::protocol;
using namespace sluice::protocol::amf;

namespace {

using Bytes = std::vector<uint8_t>;

Bytes hex(std::initializer_list<int> values) {
  Bytes out;
  for (int v : values) out.push_back(static_cast<uint8_t>(v));
  return out;
}

Bytes cat(Bytes a, const Bytes& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// Decodes one value with a fresh decoder and requires all input to be consumed.
Result<Value> decode(const Bytes& bytes, const DecodeLimits& limits = {}) {
  ByteReader in(bytes);
  Amf3Decoder decoder(limits);
  auto v = decoder.decode(in);
  if (v) CHECK_MESSAGE(in.empty(), "decoder left bytes unread");
  return v;
}

Value decode_ok(const Bytes& bytes) {
  auto v = decode(bytes);
  REQUIRE_MESSAGE(v.ok(), (v.ok() ? "" : v.error().message()));
  return *v;
}

Errc decode_error(const Bytes& bytes, const DecodeLimits& limits = {}) {
  auto v = decode(bytes, limits);
  return v ? Errc::Ok : v.error().code;
}

Bytes encode(const Value& v) {
  Bytes out;
  Amf3Encoder().encode(v, out);
  return out;
}

void check_both_ways(const Bytes& bytes, const Value& expected) {
  CHECK(decode_ok(bytes) == expected);
  CHECK(encode(expected) == bytes);
}

// [{a: 1}, {a: 2}]: the second object refers to the first one's traits (01) and to the string
// "a" (00).
const Bytes kTraitRefs = hex({0x09, 0x05, 0x01,                               //
                              0x0A, 0x0B, 0x01, 0x03, 'a', 0x04, 0x01, 0x01,  //
                              0x0A, 0x01, 0x00, 0x04, 0x02, 0x01});
// [P{x: 1, y: 2}, P{x: 3, y: 4}] with sealed members x and y; the second refers to the traits.
const Bytes kSealed = hex({0x09, 0x05, 0x01,                                                      //
                           0x0A, 0x23, 0x03, 'P',  0x03, 'x', 0x03, 'y', 0x04, 0x01, 0x04, 0x02,  //
                           0x0A, 0x01, 0x04, 0x03, 0x04, 0x04});
// ["ab", "ab"]: the second string is a reference (00) to the first.
const Bytes kStringRefs = hex({0x09, 0x05, 0x01, 0x06, 0x05, 'a', 'b', 0x06, 0x00});
// 2021-01-01T00:00:00Z = 1609459200000 ms.
const Bytes kDate = hex({0x08, 0x01, 0x42, 0x77, 0x6B, 0xB3, 0xE7, 0x00, 0x00, 0x00});

}  // namespace

TEST_CASE("amf3 simple markers") {
  check_both_ways(hex({0x00}), Value::undefined());
  check_both_ways(hex({0x01}), Value::null());
  check_both_ways(hex({0x02}), Value::boolean(false));
  check_both_ways(hex({0x03}), Value::boolean(true));
  check_both_ways(hex({0x05, 0x3F, 0xF0, 0, 0, 0, 0, 0, 0}), Value::number(1.0));
  check_both_ways(hex({0x06, 0x05, 'a', 'b'}), Value::string("ab"));
  check_both_ways(hex({0x06, 0x01}), Value::string(""));
}

TEST_CASE("amf3 U29 integer edge cases") {
  struct Case {
    Bytes bytes;
    int32_t value;
  };
  const Case cases[] = {
      {hex({0x04, 0x00}), 0},
      {hex({0x04, 0x7F}), 0x7F},
      {hex({0x04, 0x81, 0x00}), 0x80},
      {hex({0x04, 0xFF, 0x7F}), 0x3FFF},
      {hex({0x04, 0x81, 0x80, 0x00}), 0x4000},
      {hex({0x04, 0xFF, 0xFF, 0x7F}), 0x1FFFFF},
      {hex({0x04, 0x80, 0xC0, 0x80, 0x00}), 0x200000},
      {hex({0x04, 0xBF, 0xFF, 0xFF, 0xFF}), 0x0FFFFFFF},  // largest positive
      {hex({0x04, 0xFF, 0xFF, 0xFF, 0xFF}), -1},
      {hex({0x04, 0xFF, 0xFF, 0xFF, 0x80}), -128},
      {hex({0x04, 0xC0, 0x80, 0x80, 0x00}), -(1 << 28)},  // most negative
  };
  for (const auto& c : cases) {
    CAPTURE(c.value);
    check_both_ways(c.bytes, Value::integer(c.value));
  }
  // Outside 29 bits an integer is sent as a double (2^28 = 0x41B0000000000000).
  CHECK(encode(Value::integer(1 << 28)) == hex({0x05, 0x41, 0xB0, 0, 0, 0, 0, 0, 0}));
  CHECK(decode_ok(hex({0x05, 0x41, 0xB0, 0, 0, 0, 0, 0, 0})) == Value::number(268435456.0));
}

TEST_CASE("amf3 string references; the empty string is never referenced") {
  check_both_ways(kStringRefs, Value::strict_array({Value::string("ab"), Value::string("ab")}));
  // ["", "ab", "ab"]: "ab" is still index 0 because "" took no slot.
  check_both_ways(hex({0x09, 0x07, 0x01, 0x06, 0x01, 0x06, 0x05, 'a', 'b', 0x06, 0x00}),
                  Value::strict_array({Value::string(""), Value::string("ab"), Value::string("ab")}));
  // A reference to index 0 when only "" was seen is malformed.
  CHECK(decode_error(hex({0x09, 0x05, 0x01, 0x06, 0x01, 0x06, 0x00})) == Errc::Malformed);
}

TEST_CASE("amf3 tables persist across decode and encode calls of one message") {
  const Bytes two = hex({0x06, 0x05, 'a', 'b', 0x06, 0x00});
  ByteReader in(two);
  Amf3Decoder decoder;
  CHECK(decoder.decode(in)->as_string() == "ab");
  CHECK(decoder.decode(in)->as_string() == "ab");
  decoder.reset();
  const Bytes ref = hex({0x06, 0x00});
  ByteReader again(ref);
  CHECK(decoder.decode(again).error().code == Errc::Malformed);

  Amf3Encoder encoder;
  Bytes out;
  encoder.encode(Value::string("ab"), out);
  encoder.encode(Value::string("ab"), out);
  CHECK(out == two);
}

TEST_CASE("amf3 objects: dynamic members and trait references") {
  check_both_ways(kTraitRefs, Value::strict_array({Value::object({{"a", Value::integer(1)}}),
                                                   Value::object({{"a", Value::integer(2)}})}));
}

TEST_CASE("amf3 objects: sealed members, typed class, sealed plus dynamic") {
  CHECK(decode_ok(kSealed) ==
        Value::strict_array({Value::typed_object("P", {{"x", Value::integer(1)}, {"y", Value::integer(2)}}),
                             Value::typed_object("P", {{"x", Value::integer(3)}, {"y", Value::integer(4)}})}));
  // Header 0x1B: one sealed member, dynamic. Sealed x = 1, then dynamic z = 5.
  CHECK(decode_ok(hex({0x0A, 0x1B, 0x03, 'P', 0x03, 'x', 0x04, 0x01, 0x03, 'z', 0x04, 0x05, 0x01})) ==
        Value::typed_object("P", {{"x", Value::integer(1)}, {"z", Value::integer(5)}}));
  // Anonymous sealed object: header 0x13 (one sealed member, not dynamic), class name "".
  CHECK(decode_ok(hex({0x0A, 0x13, 0x01, 0x03, 'x', 0x02})) == Value::object({{"x", Value::boolean(false)}}));
}

TEST_CASE("amf3 object references stay unresolved") {
  // [{}, ref 1]: the array is object 0, the empty object is object 1.
  check_both_ways(hex({0x09, 0x05, 0x01, 0x0A, 0x0B, 0x01, 0x01, 0x0A, 0x02}),
                  Value::strict_array({Value::object(), Value::reference(1)}));
  // An array may refer to itself (object 0) without creating a cycle in the value.
  CHECK(decode_ok(hex({0x09, 0x03, 0x01, 0x09, 0x00})) == Value::strict_array({Value::reference(0)}));
  CHECK(decode_error(hex({0x0A, 0x02})) == Errc::Malformed);  // nothing in the table yet
  CHECK(decode_error(hex({0x0A, 0x05})) == Errc::Malformed);  // traits reference 1: no traits yet
}

TEST_CASE("amf3 externalizable objects are Unsupported") {
  CHECK(decode_error(hex({0x0A, 0x07, 0x07, 'f', 'o', 'o', 0x01})) == Errc::Unsupported);
}

TEST_CASE("amf3 arrays with an associative part") {
  // Dense count 1; associative k = "v"; dense 5.
  check_both_ways(hex({0x09, 0x03, 0x03, 'k', 0x06, 0x03, 'v', 0x01, 0x04, 0x05}),
                  Value::mixed_array({{"k", Value::string("v")}}, {Value::integer(5)}));
  Value v = decode_ok(hex({0x09, 0x01, 0x03, 'k', 0x01, 0x01}));
  CHECK(v.type() == Type::EcmaArray);
  CHECK(v.find("k")->is_null());
  CHECK(decode_ok(hex({0x09, 0x01, 0x01})) == Value::strict_array({}));
}

TEST_CASE("amf3 date, XML, byte array") {
  check_both_ways(kDate, Value::date(1609459200000.0));
  check_both_ways(hex({0x07, 0x09, '<', 'a', '/', '>'}), Value::xml("<a/>"));
  CHECK(decode_ok(hex({0x0B, 0x09, '<', 'a', '/', '>'})) == Value::xml("<a/>"));  // E4X XML
  check_both_ways(hex({0x0C, 0x07, 0x01, 0x02, 0x03}), Value::byte_array({1, 2, 3}));
  // Dates and byte arrays take object table slots: [date, ref 1].
  CHECK(decode_ok(cat(cat(hex({0x09, 0x05, 0x01}), kDate), hex({0x08, 0x02}))) ==
        Value::strict_array({Value::date(1609459200000.0), Value::reference(1)}));
}

TEST_CASE("amf3 vectors and dictionary") {
  check_both_ways(hex({0x0D, 0x05, 0x00, 0x00, 0x00, 0x00, 0x01, 0xFF, 0xFF, 0xFF, 0xFF}), Value::vector_int({1, -1}));
  check_both_ways(hex({0x0E, 0x03, 0x01, 0xFF, 0xFF, 0xFF, 0xFF}), Value::vector_uint({0xFFFFFFFFu}, true));
  check_both_ways(hex({0x0F, 0x03, 0x00, 0x3F, 0xF0, 0, 0, 0, 0, 0, 0}), Value::vector_double({1.0}));
  check_both_ways(hex({0x10, 0x05, 0x00, 0x03, 'T', 0x06, 0x05, 'a', 'b', 0x01}),
                  Value::vector_object("T", {Value::string("ab"), Value::null()}));
  check_both_ways(hex({0x11, 0x03, 0x00, 0x06, 0x03, 'k', 0x04, 0x01}),
                  Value::dictionary({{Value::string("k"), Value::integer(1)}}));
  CHECK(decode_ok(hex({0x11, 0x01, 0x01})).weak_keys());
}

TEST_CASE("amf3 truncation at every byte is an error") {
  const std::vector<Bytes> encodings = {
      hex({0x04, 0xBF, 0xFF, 0xFF, 0xFF}),
      hex({0x05, 0x3F, 0xF0, 0, 0, 0, 0, 0, 0}),
      hex({0x06, 0x05, 'a', 'b'}),
      kStringRefs,
      kTraitRefs,
      kSealed,
      kDate,
      hex({0x07, 0x09, '<', 'a', '/', '>'}),
      hex({0x0C, 0x07, 0x01, 0x02, 0x03}),
      hex({0x09, 0x03, 0x03, 'k', 0x06, 0x03, 'v', 0x01, 0x04, 0x05}),
      hex({0x0D, 0x05, 0x00, 0x00, 0x00, 0x00, 0x01, 0xFF, 0xFF, 0xFF, 0xFF}),
      hex({0x10, 0x05, 0x00, 0x03, 'T', 0x06, 0x05, 'a', 'b', 0x01}),
      hex({0x11, 0x03, 0x00, 0x06, 0x03, 'k', 0x04, 0x01}),
  };
  for (const auto& full : encodings) {
    for (size_t len = 0; len < full.size(); ++len) {
      CAPTURE(len);
      CHECK(decode_error(Bytes(full.begin(), full.begin() + static_cast<long>(len))) == Errc::Truncated);
    }
  }
}

TEST_CASE("amf3 huge declared lengths with tiny input are Truncated, not allocated") {
  CHECK(decode_error(hex({0x06, 0xFF, 0xFF, 0xFF, 0xFF, 'a'})) == Errc::Truncated);
  CHECK(decode_error(hex({0x0C, 0xFF, 0xFF, 0xFF, 0xFF, 'a'})) == Errc::Truncated);
  CHECK(decode_error(hex({0x07, 0xFF, 0xFF, 0xFF, 0xFF, 'a'})) == Errc::Truncated);
  CHECK(decode_error(hex({0x09, 0xFF, 0xFF, 0xFF, 0xFF, 0x01, 0x01})) == Errc::Truncated);
  CHECK(decode_error(hex({0x0D, 0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0x00})) == Errc::Truncated);
  CHECK(decode_error(hex({0x0F, 0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0x00})) == Errc::Truncated);
  CHECK(decode_error(hex({0x10, 0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0x01, 0x01})) == Errc::Truncated);
  CHECK(decode_error(hex({0x11, 0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0x01})) == Errc::Truncated);
  // Sealed member count 0x1FFFFFF3 >> 4 with one byte of names.
  CHECK(decode_error(hex({0x0A, 0xFF, 0xFF, 0xFF, 0xF3, 0x01, 0x01})) == Errc::Truncated);
}

TEST_CASE("amf3 depth bomb is LimitExceeded") {
  // {a: {a: {a: ...}}}: the first object defines the traits and "a"; the rest refer to both.
  Bytes bomb = hex({0x0A, 0x0B, 0x01, 0x03, 'a'});
  for (int i = 0; i < 100; ++i) bomb = cat(bomb, hex({0x0A, 0x01, 0x00}));
  CHECK(decode_error(bomb) == Errc::LimitExceeded);

  Bytes arrays;
  for (int i = 0; i < 100000; ++i) arrays.insert(arrays.end(), {0x09, 0x03, 0x01});
  CHECK(decode_error(arrays) == Errc::LimitExceeded);
}

TEST_CASE("amf3 string references cannot amplify input past max_total_bytes") {
  // A 10-byte string, then 50 one-byte references to it: 510 bytes of text from 62 bytes.
  Bytes in = cat(hex({0x09, 0x67, 0x01, 0x06, 0x15}), Bytes(10, 'x'));
  for (int i = 0; i < 50; ++i) in = cat(in, hex({0x06, 0x00}));
  DecodeLimits limits;
  CHECK(decode_error(in, limits) == Errc::Ok);
  limits.max_total_bytes = 100;
  CHECK(decode_error(in, limits) == Errc::LimitExceeded);
}

TEST_CASE("amf3 limits on tables and items") {
  DecodeLimits few;
  few.max_items = 4;
  CHECK(decode_error(hex({0x09, 0x09, 0x01, 0x01, 0x01, 0x01, 0x01}), few) == Errc::LimitExceeded);
  CHECK(decode_error(hex({0x09, 0x07, 0x01, 0x01, 0x01, 0x01}), few) == Errc::Ok);
  DecodeLimits short_strings;
  short_strings.max_string = 1;
  CHECK(decode_error(hex({0x06, 0x05, 'a', 'b'}), short_strings) == Errc::LimitExceeded);
}

TEST_CASE("amf3 unknown marker is Malformed") { CHECK(decode_error(hex({0x12})) == Errc::Malformed); }

TEST_CASE("amf3 decode -> encode -> decode round trips") {
  const std::vector<Bytes> encodings = {
      kTraitRefs,
      kSealed,
      kStringRefs,
      kDate,
      hex({0x0A, 0x1B, 0x03, 'P', 0x03, 'x', 0x04, 0x01, 0x03, 'z', 0x04, 0x05, 0x01}),
      hex({0x09, 0x05, 0x01, 0x0A, 0x0B, 0x01, 0x01, 0x0A, 0x02}),
      hex({0x0A, 0x13, 0x01, 0x01, 0x02})};  // sealed member named ""
  for (const auto& bytes : encodings) {
    Value first = decode_ok(bytes);
    Value second = decode_ok(encode(first));
    CHECK(first == second);
  }
  const std::vector<Value> values = {
      Value::object({{"fourCcList", Value::strict_array({Value::string("hvc1"), Value::string("av01")})},
                     {"capsEx", Value::number(15)}}),
      Value::typed_object("flex.Msg", {{"body", Value::byte_array({9, 8})}, {"when", Value::date(1e12)}}),
      Value::strict_array({Value::typed_object("A", {}), Value::typed_object("A", {{"x", Value::null()}}),
                           Value::typed_object("B", {})}),
      Value::mixed_array({{"k", Value::xml("<x/>")}}, {Value::vector_double({0.5}, true)}),
      Value::dictionary({{Value::integer(1), Value::string("one")}}, true),
      Value::string(std::string(300, 's')),
  };
  for (const auto& v : values) {
    CAPTURE(v);
    auto back = decode(encode(v));
    REQUIRE(back.ok());
    CHECK(*back == v);
  }
}
