// HTTP helpers: Range parsing, dates, entity tags, conditional requests, file names under a root.
#include <doctest/doctest.h>

#include <string>

#include "server/http/util.hpp"

using namespace sluice;
using namespace sluice::server;

namespace {

struct RangeCase {
  const char* header;
  uint64_t size;
  HttpRangeResult result;
  uint64_t first, last;
};

HttpRequest request(std::initializer_list<std::pair<std::string, std::string>> headers, std::string method = "GET") {
  HttpRequest r;
  r.method = std::move(method);
  for (const auto& h : headers) r.headers.push_back(h);
  return r;
}

}  // namespace

TEST_CASE("Range: single ranges, suffixes, clamping, unsatisfiable and ignored headers") {
  const RangeCase cases[] = {
      {"bytes=0-499", 1000, HttpRangeResult::Partial, 0, 499},
      {"bytes=500-", 1000, HttpRangeResult::Partial, 500, 999},
      {"bytes=-100", 1000, HttpRangeResult::Partial, 900, 999},
      {"bytes=-5000", 1000, HttpRangeResult::Partial, 0, 999},  // a suffix longer than the file is all of it
      {"bytes=990-5000", 1000, HttpRangeResult::Partial, 990, 999},
      {"bytes=999-999", 1000, HttpRangeResult::Partial, 999, 999},
      {" Bytes = 10 - 20 ", 1000, HttpRangeResult::Partial, 10, 20},
      {"bytes=0-99999999999999999999999", 1000, HttpRangeResult::Partial, 0, 999},  // saturates, no overflow
      {"bytes=1000-", 1000, HttpRangeResult::Unsatisfiable, 0, 0},
      {"bytes=1000-2000", 1000, HttpRangeResult::Unsatisfiable, 0, 0},
      {"bytes=99999999999999999999999-", 1000, HttpRangeResult::Unsatisfiable, 0, 0},
      {"bytes=-0", 1000, HttpRangeResult::Unsatisfiable, 0, 0},
      {"bytes=0-", 0, HttpRangeResult::Unsatisfiable, 0, 0},  // nothing of an empty file is satisfiable
      {"bytes=-1", 0, HttpRangeResult::Unsatisfiable, 0, 0},
      {"bytes=5-1", 1000, HttpRangeResult::Whole, 0, 0},      // invalid spec: the header is ignored
      {"bytes=0-1,5-9", 1000, HttpRangeResult::Whole, 0, 0},  // several ranges: ignored, 200
      {"items=0-1", 1000, HttpRangeResult::Whole, 0, 0},
      {"bytes=a-b", 1000, HttpRangeResult::Whole, 0, 0},
      {"bytes=-", 1000, HttpRangeResult::Whole, 0, 0},
      {"bytes 0-1", 1000, HttpRangeResult::Whole, 0, 0},
      {"bytes=+1-2", 1000, HttpRangeResult::Whole, 0, 0},
  };
  for (const auto& c : cases) {
    CAPTURE(c.header);
    HttpByteRange r;
    HttpRangeResult got = http_parse_range(c.header, c.size, r);
    CHECK(got == c.result);
    if (got == HttpRangeResult::Partial) {
      CHECK(r.first == c.first);
      CHECK(r.last == c.last);
      CHECK(r.length() == c.last - c.first + 1);
    }
  }
}

TEST_CASE("dates: IMF-fixdate round trip, RFC 850 and asctime forms, garbage") {
  CHECK(http_format_date(784111777) == "Sun, 06 Nov 1994 08:49:37 GMT");
  CHECK(http_parse_date("Sun, 06 Nov 1994 08:49:37 GMT") == 784111777);
  CHECK(http_parse_date("Sunday, 06-Nov-94 08:49:37 GMT") == 784111777);
  CHECK(http_parse_date("Sun Nov  6 08:49:37 1994") == 784111777);
  CHECK(http_parse_date("Thu, 01 Jan 1970 00:00:00 GMT") == 0);
  CHECK(http_parse_date(http_format_date(1893456000)) == 1893456000);  // 2030
  CHECK_FALSE(http_parse_date("yesterday").has_value());
  CHECK_FALSE(http_parse_date("Sun, 06 Foo 1994 08:49:37 GMT").has_value());
  CHECK_FALSE(http_parse_date("Sun, 06 Nov 1994 25:49:37 GMT").has_value());
  CHECK_FALSE(http_parse_date("").has_value());
}

TEST_CASE("entity tags: strong and weak comparison, lists, star, garbage") {
  std::string tag = http_make_etag(1000, 123456789);
  CHECK(tag == "\"3e8-75bcd15\"");
  CHECK(http_etag_list_matches(tag, tag, false));
  CHECK(http_etag_list_matches("*", tag, false));
  CHECK(http_etag_list_matches("\"a\", " + tag, tag, true));
  CHECK(http_etag_list_matches("W/" + tag, tag, true));
  CHECK_FALSE(http_etag_list_matches("W/" + tag, tag, false));  // strong comparison never matches a weak tag
  CHECK_FALSE(http_etag_list_matches("\"a\", \"b\"", tag, true));
  CHECK_FALSE(http_etag_list_matches("garbage", tag, true));
}

TEST_CASE("conditional requests follow the RFC 9110 order") {
  HttpValidators v{http_make_etag(10, 5'000'000'000), 5};
  std::string lm = http_format_date(5);
  std::string earlier = http_format_date(4);
  CHECK(http_evaluate_preconditions(request({}), v) == HttpPrecondition::Proceed);
  CHECK(http_evaluate_preconditions(request({{"if-none-match", v.etag}}), v) == HttpPrecondition::NotModified);
  CHECK(http_evaluate_preconditions(request({{"if-none-match", v.etag}}, "HEAD"), v) == HttpPrecondition::NotModified);
  CHECK(http_evaluate_preconditions(request({{"if-none-match", "\"x\""}}), v) == HttpPrecondition::Proceed);
  CHECK(http_evaluate_preconditions(request({{"if-modified-since", lm}}), v) == HttpPrecondition::NotModified);
  CHECK(http_evaluate_preconditions(request({{"if-modified-since", earlier}}), v) == HttpPrecondition::Proceed);
  CHECK(http_evaluate_preconditions(request({{"if-modified-since", "junk"}}), v) == HttpPrecondition::Proceed);
  // If-None-Match wins over If-Modified-Since.
  CHECK(http_evaluate_preconditions(request({{"if-none-match", "\"x\""}, {"if-modified-since", lm}}), v) ==
        HttpPrecondition::Proceed);
  CHECK(http_evaluate_preconditions(request({{"if-match", "\"x\""}}), v) == HttpPrecondition::Failed);
  CHECK(http_evaluate_preconditions(request({{"if-match", v.etag}}), v) == HttpPrecondition::Proceed);
  CHECK(http_evaluate_preconditions(request({{"if-unmodified-since", earlier}}), v) == HttpPrecondition::Failed);
  CHECK(http_evaluate_preconditions(request({{"if-unmodified-since", lm}}), v) == HttpPrecondition::Proceed);

  CHECK(http_if_range_allows(request({}), v));
  CHECK(http_if_range_allows(request({{"if-range", v.etag}}), v));
  CHECK(http_if_range_allows(request({{"if-range", lm}}), v));
  CHECK_FALSE(http_if_range_allows(request({{"if-range", "\"old\""}}), v));
  CHECK_FALSE(http_if_range_allows(request({{"if-range", "W/" + v.etag}}), v));
  CHECK_FALSE(http_if_range_allows(request({{"if-range", earlier}}), v));
}

TEST_CASE("file names: media files under the root only") {
  for (const char* ok : {"movie.flv", "sub/clip.MP4", "a b/c.m4a", "x.mov", "song.mp3", "x.y.ts"}) {
    CAPTURE(ok);
    CHECK(static_cast<bool>(http_file_relative_path(ok)));
  }
  using namespace std::string_view_literals;
  for (std::string_view bad : {""sv, "/etc/passwd.mp4"sv, "../x.mp4"sv, "a/../x.mp4"sv, "a/./x.mp4"sv, "a//x.mp4"sv,
                               "./x.mp4"sv, "sub/"sv, "x.txt"sv, "noext"sv, "x.mp4/"sv, "..\\x.mp4"sv, "%2e%2e/x.mp4"sv,
                               ".hidden.mp4"sv, "sub/.tmp/x.mp4"sv, "a\x01.mp4"sv, "a\0.mp4"sv, "x.mp4.txt"sv}) {
    CAPTURE(bad);
    CHECK_FALSE(static_cast<bool>(http_file_relative_path(bad)));
  }
  CHECK_FALSE(static_cast<bool>(http_file_relative_path(std::string(2000, 'a') + ".mp4")));
  CHECK(http_content_type_for("a/B.FLV") == "video/x-flv");
  CHECK(http_content_type_for("a.m4a") == "audio/mp4");
  CHECK(http_content_type_for("a.mov") == "video/quicktime");
  CHECK(http_content_type_for("a.flv/b").empty());
}

TEST_CASE("percent-decoding of paths") {
  std::string out;
  CHECK(http_percent_decode("a%20b%2F%2e", out));
  CHECK(out == "a b/.");
  CHECK(http_percent_decode("100%25", out));
  CHECK(out == "100%");
  CHECK_FALSE(http_percent_decode("bad%2", out));
  CHECK_FALSE(http_percent_decode("bad%zz", out));
  CHECK(http_status_text(416) == "Range Not Satisfiable");
}
