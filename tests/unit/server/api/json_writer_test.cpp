// server/json_writer.hpp: the text it writes is, byte for byte, what nlohmann::json's dump(2, ' ',
// false, replace) writes for the same values (the stats API's form, server/api_json.hpp), and it
// escapes what JSON needs escaped: quotes, backslashes, control characters; UTF-8 goes through.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "server/api/json_writer.hpp"

using namespace sluice::server;
using nlohmann::json;

namespace {

std::string escaped(std::string_view s) {
  std::string out;
  append_json_string(out, s);
  return out;
}

std::string dumped(const json& j) { return j.dump(2, ' ', false, json::error_handler_t::replace); }

std::string written(const json& j) {
  std::string out;
  JsonWriter w(out);
  w.value(j);
  return out;
}

}  // namespace

TEST_CASE("strings: quotes, backslashes and control characters escaped, UTF-8 as it is") {
  CHECK(escaped("") == "\"\"");
  CHECK(escaped("live/cam1") == "\"live/cam1\"");
  CHECK(escaped("a\"b") == "\"a\\\"b\"");
  CHECK(escaped("a\\b") == "\"a\\\\b\"");
  CHECK(escaped("\b\f\n\r\t") == "\"\\b\\f\\n\\r\\t\"");
  CHECK(escaped(std::string_view("\0\x01\x1f", 3)) == "\"\\u0000\\u0001\\u001f\"");
  CHECK(escaped("x\x1b[0m") == "\"x\\u001b[0m\"");
  CHECK(escaped("\x7f") == "\"\x7f\"");  // DEL is not a control character to JSON
  CHECK(escaped("/") == "\"/\"");
  CHECK(escaped("caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x8e\xa5") ==
        "\"caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x8e\xa5\"");
  // Invalid UTF-8 (a lone continuation byte, a cut sequence, an overlong form, a surrogate)
  // becomes U+FFFD, as nlohmann's replace handler has it.
  for (std::string bad : {"a\x80z", "a\xc3", "\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80", "ok\xe6\x97"}) {
    CAPTURE(bad);
    CHECK(escaped(bad) == json(bad).dump(-1, ' ', false, json::error_handler_t::replace));
    CHECK(escaped(bad).find("\xef\xbf\xbd") != std::string::npos);
  }
  // Every single byte and a few pairs, against nlohmann.
  for (int c = 0; c < 256; ++c) {
    std::string s = "<" + std::string(1, static_cast<char>(c)) + ">";
    CAPTURE(c);
    CHECK(escaped(s) == json(s).dump(-1, ' ', false, json::error_handler_t::replace));
  }
}

TEST_CASE("numbers, booleans and null as nlohmann writes them") {
  std::string out;
  JsonWriter w(out);
  w.begin_array()
      .number(uint64_t{0})
      .number(std::numeric_limits<uint64_t>::max())
      .number(int64_t{-42})
      .number(std::numeric_limits<int64_t>::min())
      .number(uint8_t{31})
      .number(3.0)
      .number(0.1)
      .number(-0.0)
      .number(1234.5)
      .number(1e20)
      .number(1e-7)
      .number(std::nan(""))
      .number(std::numeric_limits<double>::infinity())
      .boolean(true)
      .boolean(false)
      .null()
      .end_array();
  CHECK(out ==
        "[\n  0,\n  18446744073709551615,\n  -42,\n  -9223372036854775808,\n  31,\n  3.0,\n  0.1,\n"
        "  -0.0,\n  1234.5,\n  1e+20,\n  1e-07,\n  null,\n  null,\n  true,\n  false,\n  null\n]");
  for (double d : {0.0, 3.0, 0.1, 1234.5, 64.2, 1e20, 1e-7, 123456789012345.6, 2.5e-300}) {
    CAPTURE(d);
    CHECK(written(json(d)) == json(d).dump());
  }
}

TEST_CASE("layout: objects and arrays, nested and empty, as dump(2)") {
  std::string out;
  JsonWriter w(out);
  w.begin_object()
      .member_number("a", 1)
      .key("b")
      .begin_array()
      .begin_object()
      .end_object()
      .begin_array()
      .end_array()
      .string("x")
      .end_array()
      .key("c")
      .begin_object()
      .member_null("d")
      .member_bool("e", true)
      .end_object()
      .member_string("f\n", "g")
      .end_object();
  CHECK(out ==
        "{\n  \"a\": 1,\n  \"b\": [\n    {},\n    [],\n    \"x\"\n  ],\n  \"c\": {\n    \"d\": null,\n"
        "    \"e\": true\n  },\n  \"f\\n\": \"g\"\n}");

  json j = json::parse(R"({"streams": [{"name": "live/a", "hls": null, "n": -3, "kbps": 64.2,
    "video": {"codec": "H264", "level": 31}, "list": [1, [2, []], {}], "empty": {}}], "total": 1})");
  j["odd \"key\"\t"] = "v\x01";
  CHECK(written(j) == dumped(j));
  CHECK(written(json::array()) == "[]");
  CHECK(written(json::object()) == "{}");
  CHECK(written(json()) == "null");

  // A value written inside a writer's object is indented for its depth.
  std::string nested;
  JsonWriter n(nested);
  n.begin_object().key("inner").value(j).end_object();
  CHECK(nested == dumped(json{{"inner", j}}));
}
