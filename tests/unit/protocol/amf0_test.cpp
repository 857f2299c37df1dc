// AMF0 tests. Every byte vector here was written by hand from the AMF0 specification
// (docs/protocol.md, "AMF0"), never produced by our encoder.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/amf0.hpp"

namespace sluice::protocol::amf {
// Lets doctest print values in failed checks.
std::ostream& operator<<(std::ostream& os, const Value& v) { return os << v.to_debug_string(); }
}  // namespace sluice::protocol::amf

using namespace sluice;
using namespace sluice::protocol;
using namespace sluice::protocol::amf;

namespace {

using Bytes = std::vector<uint8_t>;

// Builds a byte vector from hex bytes and literal text pieces, so vectors read like the spec.
struct B {
  Bytes bytes;
  B& hex(std::initializer_list<int> values) {
    for (int v : values) bytes.push_back(static_cast<uint8_t>(v));
    return *this;
  }
  B& text(std::string_view s) {
    bytes.insert(bytes.end(), s.begin(), s.end());
    return *this;
  }
  operator Bytes() const { return bytes; }
};

Result<Value> decode(const Bytes& bytes, const DecodeLimits& limits = {}) {
  ByteReader in(bytes);
  auto v = decode_amf0(in, limits);
  if (v) CHECK_MESSAGE(in.empty(), "decoder left bytes unread");
  return v;
}

Value decode_ok(const Bytes& bytes) {
  auto v = decode(bytes);
  REQUIRE_MESSAGE(v.ok(), (v.ok() ? "" : v.error().message()));
  return *v;
}

Bytes encode(const Value& v) {
  Bytes out;
  encode_amf0(v, out);
  return out;
}

Errc decode_error(const Bytes& bytes, const DecodeLimits& limits = {}) {
  auto v = decode(bytes, limits);
  if (v) return Errc::Ok;
  return v.error().code;
}

// Checks decoding both ways: bytes -> value, and value -> exactly the same bytes.
void check_both_ways(const Bytes& bytes, const Value& expected) {
  CHECK(decode_ok(bytes) == expected);
  CHECK(encode(expected) == bytes);
}

const Bytes kNumberOne = B().hex({0x00, 0x3F, 0xF0, 0, 0, 0, 0, 0, 0});
const Bytes kObjectATrue = B().hex({0x03, 0x00, 0x01, 'a', 0x01, 0x01, 0x00, 0x00, 0x09});

}  // namespace

TEST_CASE("amf0 scalars decode and encode byte-exact") {
  check_both_ways(kNumberOne, Value::number(1.0));
  check_both_ways(B().hex({0x00, 0xC0, 0x04, 0, 0, 0, 0, 0, 0}), Value::number(-2.5));
  check_both_ways(B().hex({0x01, 0x01}), Value::boolean(true));
  check_both_ways(B().hex({0x01, 0x00}), Value::boolean(false));
  check_both_ways(B().hex({0x02, 0x00, 0x02, 'a', 'b'}), Value::string("ab"));
  check_both_ways(B().hex({0x02, 0x00, 0x00}), Value::string(""));
  check_both_ways(B().hex({0x05}), Value::null());
  check_both_ways(B().hex({0x06}), Value::undefined());
  check_both_ways(B().hex({0x0D}), Value::unsupported());
  check_both_ways(B().hex({0x07, 0x01, 0x02}), Value::reference(0x0102));
}

TEST_CASE("amf0 boolean: any non-zero byte is true") { CHECK(decode_ok(B().hex({0x01, 0x7F})).as_boolean()); }

TEST_CASE("amf0 object, ECMA array, strict array, typed object") {
  check_both_ways(kObjectATrue, Value::object({{"a", Value::boolean(true)}}));
  check_both_ways(B().hex({0x03, 0x00, 0x00, 0x09}), Value::object());

  const Bytes ecma = B().hex({0x08, 0x00, 0x00, 0x00, 0x02})
                         .hex({0x00, 0x08})
                         .text("duration")
                         .hex({0x00, 0x40, 0x24, 0, 0, 0, 0, 0, 0})
                         .hex({0x00, 0x06})
                         .text("stereo")
                         .hex({0x01, 0x00})
                         .hex({0x00, 0x00, 0x09});
  check_both_ways(ecma, Value::ecma_array({{"duration", Value::number(10.0)}, {"stereo", Value::boolean(false)}}));

  const Bytes strict = B().hex({0x0A, 0x00, 0x00, 0x00, 0x03})
                           .hex({0x00, 0x3F, 0xF0, 0, 0, 0, 0, 0, 0})
                           .hex({0x02, 0x00, 0x01, 'a'})
                           .hex({0x05});
  check_both_ways(strict, Value::strict_array({Value::number(1), Value::string("a"), Value::null()}));

  const Bytes typed = B().hex({0x10, 0x00, 0x03})
                          .text("Foo")
                          .hex({0x00, 0x01, 'x', 0x00, 0x3F, 0xF0, 0, 0, 0, 0, 0, 0})
                          .hex({0x00, 0x00, 0x09});
  Value foo = Value::typed_object("Foo", {{"x", Value::number(1)}});
  check_both_ways(typed, foo);
  CHECK(foo.class_name() == "Foo");
  CHECK(foo.is_object_like());
}

TEST_CASE("amf0 ECMA array count is only a hint") {
  // Declares 0 members but carries one; declares 0xFFFFFFFF and carries none.
  Value one = decode_ok(B().hex({0x08, 0, 0, 0, 0, 0x00, 0x01, 'k', 0x05, 0x00, 0x00, 0x09}));
  CHECK(one == Value::ecma_array({{"k", Value::null()}}));
  CHECK(decode_ok(B().hex({0x08, 0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0x00, 0x09})) == Value::ecma_array());
}

TEST_CASE("amf0 date, XML document and long string") {
  // 2021-01-01T00:00:00Z = 1609459200000 ms, time zone field 0.
  const Bytes date = B().hex({0x0B, 0x42, 0x77, 0x6B, 0xB3, 0xE7, 0x00, 0x00, 0x00, 0x00, 0x00});
  check_both_ways(date, Value::date(1609459200000.0));
  Value with_tz = decode_ok(B().hex({0x0B, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xC4}));
  CHECK(with_tz.date_tz() == -60);

  check_both_ways(B().hex({0x0F, 0, 0, 0, 4}).text("<a/>"), Value::xml("<a/>"));

  // 65535 bytes still fit a short string; 65536 need a long string (0x0C, u32 length).
  const std::string max_short(65535, 'x');
  check_both_ways(B().hex({0x02, 0xFF, 0xFF}).text(max_short), Value::string(max_short));
  const std::string long_text(65536, 'y');
  check_both_ways(B().hex({0x0C, 0x00, 0x01, 0x00, 0x00}).text(long_text), Value::string(long_text));
  // A short text sent as a long string still decodes to a String.
  CHECK(decode_ok(B().hex({0x0C, 0, 0, 0, 2}).text("hi")) == Value::string("hi"));
}

TEST_CASE("amf0 ffmpeg-style connect command") {
  const Bytes connect = B().hex({0x02, 0x00, 0x07})
                            .text("connect")
                            .hex({0x00, 0x3F, 0xF0, 0, 0, 0, 0, 0, 0})
                            .hex({0x03})
                            .hex({0x00, 0x03})
                            .text("app")
                            .hex({0x02, 0x00, 0x04})
                            .text("live")
                            .hex({0x00, 0x04})
                            .text("type")
                            .hex({0x02, 0x00, 0x0A})
                            .text("nonprivate")
                            .hex({0x00, 0x08})
                            .text("flashVer")
                            .hex({0x02, 0x00, 0x1D})
                            .text("FMLE/3.0 (compatible; Lavf59)")
                            .hex({0x00, 0x05})
                            .text("tcUrl")
                            .hex({0x02, 0x00, 0x1A})
                            .text("rtmp://localhost:1935/live")
                            .hex({0x00, 0x00, 0x09});
  auto values = decode_amf0_all(connect);
  REQUIRE(values.ok());
  REQUIRE(values->size() == 3);
  CHECK((*values)[0].as_string() == "connect");
  CHECK((*values)[1].as_number() == 1.0);
  const Value& cmd = (*values)[2];
  CHECK(cmd.get_string("app") == "live");
  CHECK(cmd.get_string("type") == "nonprivate");
  CHECK(cmd.get_string("flashVer") == "FMLE/3.0 (compatible; Lavf59)");
  CHECK(cmd.get_string("tcUrl") == "rtmp://localhost:1935/live");
  CHECK(cmd.get_number("objectEncoding", 0) == 0);  // absent: the fallback

  Bytes reencoded;
  for (const auto& v : *values) encode_amf0(v, reencoded);
  CHECK(reencoded == connect);

  // Every truncation is an error or (at a value or member boundary) a shorter success; never a crash.
  for (size_t len = 0; len < connect.size(); ++len) {
    auto r = decode_amf0_all(std::span<const uint8_t>(connect.data(), len));
    if (!r) CHECK(r.error().code == Errc::Truncated);
  }
}

TEST_CASE("amf0 missing object-end terminator at end of payload is accepted") {
  CHECK(decode_ok(B().hex({0x03, 0x00, 0x01, 'a', 0x05})) == Value::object({{"a", Value::null()}}));
  CHECK(decode_ok(B().hex({0x03, 0x00, 0x01, 'a', 0x05, 0x00, 0x00})) == Value::object({{"a", Value::null()}}));
  // Not at the end of the payload, the terminator is required: a missing one reads on as members.
  CHECK(decode_error(B().hex({0x03, 0x00, 0x01, 'a', 0x05, 0x00})) == Errc::Truncated);
}

TEST_CASE("amf0 empty member name that is not the terminator") {
  check_both_ways(B().hex({0x03, 0x00, 0x00, 0x05, 0x00, 0x00, 0x09}), Value::object({{"", Value::null()}}));
}

TEST_CASE("amf0 truncation at every byte of {a: true}") {
  // Accepted prefixes: "03" (ends where a name would start), the full members without the
  // terminator, and the members plus 00 00. Everything else is Truncated.
  for (size_t len = 0; len < kObjectATrue.size(); ++len) {
    CAPTURE(len);
    auto r = decode(Bytes(kObjectATrue.begin(), kObjectATrue.begin() + static_cast<long>(len)));
    if (len == 1) {
      REQUIRE(r.ok());
      CHECK(*r == Value::object());
    } else if (len == 6 || len == 8) {
      REQUIRE(r.ok());
      CHECK(*r == Value::object({{"a", Value::boolean(true)}}));
    } else {
      REQUIRE_FALSE(r.ok());
      CHECK(r.error().code == Errc::Truncated);
    }
  }
}

TEST_CASE("amf0 truncation at every byte of non-object values is an error") {
  const std::vector<Bytes> encodings = {
      kNumberOne,
      B().hex({0x01, 0x01}),
      B().hex({0x02, 0x00, 0x02, 'a', 'b'}),
      B().hex({0x07, 0x00, 0x01}),
      B().hex({0x0B, 0x42, 0x77, 0x6B, 0xB3, 0xE7, 0, 0, 0, 0, 0}),
      B().hex({0x0C, 0, 0, 0, 3}).text("abc"),
      B().hex({0x0F, 0, 0, 0, 4}).text("<a/>"),
      B().hex({0x0A, 0, 0, 0, 2, 0x02, 0x00, 0x01, 'a', 0x01, 0x00}),
      B().hex({0x11, 0x04, 0xFF, 0xFF, 0x7F}),
  };
  for (const auto& full : encodings) {
    for (size_t len = 0; len < full.size(); ++len) {
      CAPTURE(len);
      CHECK(decode_error(Bytes(full.begin(), full.begin() + static_cast<long>(len))) == Errc::Truncated);
    }
  }
}

TEST_CASE("amf0 huge declared lengths with tiny input are Truncated, not allocated") {
  // Under ASan an attempt to allocate 4 GiB would abort the test.
  CHECK(decode_error(B().hex({0x02, 0xFF, 0xFF, 'a'})) == Errc::Truncated);
  CHECK(decode_error(B().hex({0x0C, 0xFF, 0xFF, 0xFF, 0xFF, 'a'})) == Errc::Truncated);
  CHECK(decode_error(B().hex({0x0F, 0xFF, 0xFF, 0xFF, 0xFF, 'a'})) == Errc::Truncated);
  CHECK(decode_error(B().hex({0x0A, 0xFF, 0xFF, 0xFF, 0xFF, 0x05})) == Errc::Truncated);
  CHECK(decode_error(B().hex({0x03, 0xFF, 0xFF, 'a'})) == Errc::Truncated);
  CHECK(decode_error(B().hex({0x10, 0xFF, 0xFF})) == Errc::Truncated);
}

TEST_CASE("amf0 depth bomb is LimitExceeded") {
  auto nested = [](size_t levels) {
    B b;
    for (size_t i = 0; i < levels; ++i) b.hex({0x03, 0x00, 0x01, 'a'});
    b.hex({0x05});
    for (size_t i = 0; i < levels; ++i) b.hex({0x00, 0x00, 0x09});
    return Bytes(b);
  };
  CHECK(decode(nested(64)).ok());  // exactly max_depth containers
  CHECK(decode_error(nested(65)) == Errc::LimitExceeded);
  CHECK(decode_error(nested(100000)) == Errc::LimitExceeded);

  B arrays;
  for (int i = 0; i < 1000; ++i) arrays.hex({0x0A, 0, 0, 0, 1});
  CHECK(decode_error(arrays) == Errc::LimitExceeded);

  // Depth carries across the 0x11 switch: 60 AMF0 objects, then 10 nested AMF3 arrays.
  B mixed;
  for (int i = 0; i < 60; ++i) mixed.hex({0x03, 0x00, 0x01, 'a'});
  mixed.hex({0x11});
  for (int i = 0; i < 10; ++i) mixed.hex({0x09, 0x03, 0x01});
  mixed.hex({0x01});
  CHECK(decode_error(mixed) == Errc::LimitExceeded);
}

TEST_CASE("amf0 limits: strings, items, total bytes") {
  DecodeLimits small;
  small.max_string = 3;
  CHECK(decode_error(B().hex({0x02, 0x00, 0x04}).text("abcd"), small) == Errc::LimitExceeded);
  CHECK(decode_error(B().hex({0x02, 0x00, 0x03}).text("abc"), small) == Errc::Ok);

  DecodeLimits few;
  few.max_items = 3;
  CHECK(decode_error(B().hex({0x0A, 0, 0, 0, 3, 0x05, 0x05, 0x05}), few) == Errc::LimitExceeded);
  CHECK(decode_error(B().hex({0x0A, 0, 0, 0, 2, 0x05, 0x05}), few) == Errc::Ok);

  DecodeLimits total;
  total.max_total_bytes = 5;
  const Bytes two_strings = B().hex({0x0A, 0, 0, 0, 2, 0x02, 0, 3}).text("abc").hex({0x02, 0, 3}).text("def");
  CHECK(decode_error(two_strings, total) == Errc::LimitExceeded);
}

TEST_CASE("amf0 reserved and unknown markers") {
  CHECK(decode_error(B().hex({0x04})) == Errc::Unsupported);  // movieclip
  CHECK(decode_error(B().hex({0x0E})) == Errc::Unsupported);  // recordset
  CHECK(decode_error(B().hex({0x09})) == Errc::Malformed);    // stray object end
  CHECK(decode_error(B().hex({0x12})) == Errc::Malformed);
  CHECK(decode_error(B().hex({0xFF})) == Errc::Malformed);
}

TEST_CASE("amf0 error context names the value and byte offset") {
  auto r = decode_amf0_all(Bytes(B().hex({0x05, 0x02, 0x00, 0x05, 'a'})));
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == Errc::Truncated);
  CHECK(r.error().context.find("amf0 string at byte 1") != std::string::npos);
}

TEST_CASE("amf0 switch to AMF3 decodes one AMF3 value") {
  CHECK(decode_ok(B().hex({0x11, 0x04, 0x7F})) == Value::integer(127));
  CHECK(decode_ok(B().hex({0x11, 0x06, 0x05, 'a', 'b'})) == Value::string("ab"));
  CHECK(decode_ok(B().hex({0x11, 0x0A, 0x0B, 0x01, 0x03, 'a', 0x04, 0x01, 0x01})) ==
        Value::object({{"a", Value::integer(1)}}));
  // The switch is not sticky: the next value is AMF0 again.
  auto all = decode_amf0_all(Bytes(B().hex({0x11, 0x02, 0x05})));
  REQUIRE(all.ok());
  CHECK(*all == std::vector<Value>{Value::boolean(false), Value::null()});
  // AMF3-only kinds are written behind the switch.
  CHECK(encode(Value::integer(127)) == Bytes(B().hex({0x11, 0x04, 0x7F})));
}

TEST_CASE("amf0 re-encodes an AMF3 value behind the switch it came from, so references keep their table") {
  // AMF3 array (object 0) {"a": dictionary (object 1) {ref(1): undefined}}. The array alone fits
  // AMF0 (an ECMA array), but the dictionary's key counts objects from the array's switch: written
  // as AMF0 with the switch moved down to the dictionary, ref(1) would point past the table.
  const Bytes input = B().hex({0x11, 0x09, 0x01, 0x03, 'a', 0x11, 0x03, 0x00, 0x0A, 0x02, 0x00, 0x01});
  const Value v = decode_ok(input);
  CHECK(v.came_from_amf3_switch());
  const Bytes again = encode(v);
  REQUIRE(!again.empty());
  CHECK(again[0] == 0x11);  // switched at the array, not at the dictionary inside it
  auto back = decode(encode(v));
  REQUIRE(back.ok());
  CHECK(*back == v);
}

TEST_CASE("amf0 encode -> decode round trips") {
  const std::vector<Value> values = {
      Value::number(3.25),
      Value::string(std::string(70000, 'z')),
      Value::object({{"app", Value::string("live")}, {"n", Value::number(2)}, {"o", Value::object()}}),
      Value::ecma_array({{"width", Value::number(1280)}, {"height", Value::number(720)}}),
      Value::strict_array({Value::null(), Value::undefined(), Value::strict_array({})}),
      Value::typed_object("T", {{"x", Value::date(5.0, 60)}}),
      Value::xml("<x/>"),
      Value::integer(-5),
      Value::byte_array({1, 2, 3}),
      Value::mixed_array({{"k", Value::number(1)}}, {Value::string("d")}),
      Value::vector_int({1, -1}),
      Value::dictionary({{Value::string("k"), Value::number(2)}}),
      Value::object({{std::string(70000, 'k'), Value::null()}}),  // name too long for AMF0: via AMF3
  };
  for (const auto& v : values) {
    CAPTURE(v.to_debug_string().substr(0, 200));
    auto back = decode(encode(v));
    REQUIRE(back.ok());
    CHECK(*back == v);
  }
}

TEST_CASE("amf value accessors") {
  Value obj = Value::object({{"a", Value::string("x")}, {"n", Value::integer(7)}});
  CHECK(obj.get_string("a") == "x");
  CHECK(obj.get_string("n", "fallback") == "fallback");  // not a string
  CHECK(obj.get_number("n") == 7);
  CHECK(obj.get_number("missing", -1) == -1);
  CHECK(obj.find("missing") == nullptr);
  obj.set("a", Value::boolean(true)).set("b", Value::null());
  CHECK(obj.properties().size() == 3);
  CHECK(obj.find("a")->as_boolean());
  CHECK(Value::number(1).as_string().empty());
  CHECK(Value::number(1).find("a") == nullptr);
  CHECK(Value::ecma_array({{"k", Value::number(1)}}).get_number("k") == 1);  // ECMA array as object
  CHECK(Value::string("s").as_number(9) == 9);
  CHECK(Value().is_undefined());
  CHECK(Value::number(NAN) == Value::number(NAN));
  CHECK_FALSE(Value::number(1) == Value::integer(1));
  CHECK(obj.to_debug_string() == R"({"a": true, "n": 7i, "b": null})");
  CHECK(Value::strict_array({Value::number(1.5), Value::string("q\"")}).to_debug_string() == R"([1.5, "q\""])");
}
