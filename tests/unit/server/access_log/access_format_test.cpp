// server/access_log/access_record.hpp: the access log's lines in each format (docs/access_log.md),
// exactly as written, with what a client can put in them escaped; the end reasons' statuses.
#include <doctest/doctest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>

#include "server/access_log/access_record.hpp"

using namespace sluice;
using namespace sluice::server;
using config::AccessLogFormat;

namespace {

constexpr int64_t kTime = 1796724000123;  // 2026-12-08T10:00:00.123Z

AccessRecord http_get() {
  AccessRecord r;
  r.conn = 7;
  r.client = "127.0.0.1";
  r.method = "GET";
  r.target = "/live/cam.flv";
  r.protocol = "HTTP/1.1";
  r.status = 200;
  r.bytes_in = 78;
  r.bytes_out = 1234;
  r.duration_ms = 1500;
  r.user_agent = "curl/7.88.1";
  r.unix_ms = kTime;
  return r;
}

AccessRecord rtmp_play() {
  AccessRecord r;
  r.kind = AccessRecord::Kind::Session;
  r.conn = 12;
  r.client = "192.0.2.7";
  r.method = "PLAY";
  r.target = "rtmp://media.example:1935/live/cam";
  r.protocol = "RTMP";
  r.app = "live";
  r.stream = "cam";
  r.reason = "peer closed";
  r.status = access_session_status(r.reason);
  r.bytes_in = 3500;
  r.bytes_out = 4194304;
  r.duration_ms = 62005;
  r.user_agent = "LNX 9,0,124,2";
  r.unix_ms = kTime;
  return r;
}

}  // namespace

TEST_CASE("combined and common: an HTTP GET as nginx writes it, with $request_time appended") {
  CHECK(
      format_access_line(http_get(), AccessLogFormat::Combined, 3600) ==
      "127.0.0.1 - - [08/Dec/2026:11:00:00 +0100] \"GET /live/cam.flv HTTP/1.1\" 200 1234 \"-\" \"curl/7.88.1\" 1.500");
  CHECK(format_access_line(http_get(), AccessLogFormat::Common, 3600) ==
        "127.0.0.1 - - [08/Dec/2026:11:00:00 +0100] \"GET /live/cam.flv HTTP/1.1\" 200 1234 1.500");
  AccessRecord r = http_get();
  r.referer = "http://page.example/watch";
  r.status = 404;
  r.bytes_out = 0;
  r.duration_ms = 3;
  CHECK(format_access_line(r, AccessLogFormat::Combined, 0) ==
        "127.0.0.1 - - [08/Dec/2026:10:00:00 +0000] \"GET /live/cam.flv HTTP/1.1\" 404 0 "
        "\"http://page.example/watch\" \"curl/7.88.1\" 0.003");
}

TEST_CASE("the time: Apache's example, negative offsets and half hours") {
  AccessRecord r = http_get();
  r.unix_ms = 971211336000;
  CHECK(format_access_line(r, AccessLogFormat::Common, -7 * 3600)
            .starts_with("127.0.0.1 - - [10/Oct/2000:13:55:36 -0700]"));
  CHECK(format_access_line(r, AccessLogFormat::Common, -(9 * 3600 + 1800)).find("[10/Oct/2000:11:25:36 -0930]") !=
        std::string::npos);
  CHECK(format_access_line(r, AccessLogFormat::Common, 5 * 3600 + 1800).find("[11/Oct/2000:02:25:36 +0530]") !=
        std::string::npos);
}

TEST_CASE("combined: an RTMP play in the same shape") {
  CHECK(format_access_line(rtmp_play(), AccessLogFormat::Combined, 0) ==
        "192.0.2.7 - - [08/Dec/2026:10:00:00 +0000] \"PLAY rtmp://media.example:1935/live/cam RTMP\" 200 4194304 "
        "\"-\" \"LNX 9,0,124,2\" 62.005");
}

TEST_CASE("combined: quotes, backslashes, control and non-ASCII bytes are \\xHH (no log injection)") {
  AccessRecord r = rtmp_play();
  r.stream = "a\"b";
  r.target = "rtmp://h/live/a\" 200 1 \"-\" \"x\n10.0.0.1 - - [x] \"GET /";
  r.user_agent = "evil\"agent\\\r\n\x1b[31m\x7f\xc3\xa9";
  const std::string line = format_access_line(r, AccessLogFormat::Combined, 0);
  CHECK(
      line ==
      "192.0.2.7 - - [08/Dec/2026:10:00:00 +0000] \"PLAY rtmp://h/live/a\\x22\\x20200\\x201\\x20\\x22-\\x22\\x20\\x22x"
      "\\x0A10.0.0.1\\x20-\\x20-\\x20[x]\\x20\\x22GET\\x20/ RTMP\" 200 4194304 \"-\" "
      "\"evil\\x22agent\\x5C\\x0D\\x0A\\x1B[31m\\x7F\\xC3\\xA9\" 62.005");
  CHECK(line.find('\n') == std::string::npos);
  // The quotes of combined's three quoted fields, and no other.
  CHECK(std::count(line.begin(), line.end(), '"') == 6);

  AccessRecord spaced = rtmp_play();
  spaced.target = "rtmp://h/live/my cam";  // the request stays three words
  CHECK(format_access_line(spaced, AccessLogFormat::Common, 0).find("\"PLAY rtmp://h/live/my\\x20cam RTMP\"") !=
        std::string::npos);
  spaced.user_agent = "a b";  // elsewhere a space is a space
  CHECK(format_access_line(spaced, AccessLogFormat::Combined, 0).find("\"a b\"") != std::string::npos);

  AccessRecord empty = rtmp_play();
  empty.client.clear();
  empty.user_agent.clear();
  CHECK(format_access_line(empty, AccessLogFormat::Combined, 0).starts_with("- - - [08/Dec/2026"));
  CHECK(format_access_line(empty, AccessLogFormat::Combined, 0).ends_with("\"-\" \"-\" 62.005"));

  AccessRecord bad = http_get();
  bad.method.clear();  // a request that never parsed
  bad.status = 400;
  CHECK(format_access_line(bad, AccessLogFormat::Common, 0) ==
        "127.0.0.1 - - [08/Dec/2026:10:00:00 +0000] \"-\" 400 1234 1.500");
}

TEST_CASE("a field is cut at 2048 bytes") {
  AccessRecord r = http_get();
  r.user_agent = std::string(5000, 'a');
  const std::string line = format_access_line(r, AccessLogFormat::Combined, 0);
  CHECK(line.find(std::string(2048, 'a') + "...\"") != std::string::npos);
  CHECK(line.find(std::string(2049, 'a')) == std::string::npos);
  const auto json = nlohmann::json::parse(format_access_line(r, AccessLogFormat::Json, 0));
  CHECK(json["user_agent"].get<std::string>() == std::string(2048, 'a') + "...");
}

TEST_CASE("json: one valid object per line with named fields") {
  const std::string line = format_access_line(rtmp_play(), AccessLogFormat::Json, 3600);
  CHECK(line ==
        "{\"time\":\"2026-12-08T10:00:00.123Z\",\"kind\":\"session\",\"conn\":12,\"client\":\"192.0.2.7\","
        "\"method\":\"PLAY\",\"target\":\"rtmp://media.example:1935/live/cam\",\"protocol\":\"RTMP\",\"app\":\"live\","
        "\"stream\":\"cam\",\"status\":200,\"reason\":\"peer closed\",\"bytes_in\":3500,\"bytes_out\":4194304,"
        "\"duration\":62.005,\"referer\":\"\",\"user_agent\":\"LNX 9,0,124,2\"}");
  const auto j = nlohmann::json::parse(format_access_line(http_get(), AccessLogFormat::Json, 0));
  CHECK(j["kind"] == "http");
  CHECK(j["method"] == "GET");
  CHECK(j["status"] == 200);
  CHECK(j["bytes_out"] == 1234);
  CHECK(j["bytes_in"] == 78);
  CHECK(j["duration"].get<double>() == doctest::Approx(1.5));
}

TEST_CASE("json: hostile strings stay valid JSON and say what was sent") {
  AccessRecord r = rtmp_play();
  r.stream = "q\"b\\s\n\t\x01\x7f";
  r.user_agent = "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x8e\xa5";            // valid UTF-8 passes
  r.reason = std::string("bad \xff\xc3 \xed\xa0\x80 \xc0\xaf end", 17);  // not UTF-8: U+FFFD each byte
  const std::string line = format_access_line(r, AccessLogFormat::Json, 0);
  CHECK(line.find('\n') == std::string::npos);
  CHECK(line.find("\"stream\":\"q\\\"b\\\\s\\u000a\\u0009\\u0001\\u007f\"") != std::string::npos);
  const auto j = nlohmann::json::parse(line);  // throws on invalid JSON or UTF-8
  CHECK(j["stream"].get<std::string>() == r.stream);
  CHECK(j["user_agent"].get<std::string>() == r.user_agent);
  CHECK(j["reason"].get<std::string>() ==
        "bad \xef\xbf\xbd\xef\xbf\xbd \xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd \xef\xbf\xbd\xef\xbf\xbd end");
  // A sequence cut by the 2048-byte limit is not passed half.
  AccessRecord cut = rtmp_play();
  cut.stream = std::string(2047, 'x') + "\xc3\xa9";
  CHECK_NOTHROW((void)nlohmann::json::parse(format_access_line(cut, AccessLogFormat::Json, 0)));
}

TEST_CASE("a session's status from its end reason") {
  CHECK(access_session_status("peer closed") == 200);
  CHECK(access_session_status("unpublish") == 200);
  CHECK(access_session_status("FCUnpublish") == 200);
  CHECK(access_session_status("hls viewer left") == 200);
  CHECK(access_session_status("ended") == 200);
  CHECK(access_session_status("closed: source ended") == 200);
  CHECK(access_session_status("protocol error: bad chunk") == 400);
  CHECK(access_session_status("DTLS: handshake failed") == 400);
  CHECK(access_session_status("closed through the API") == 403);
  CHECK(access_session_status("session lifetime given by the hook is over") == 403);
  CHECK(access_session_status("idle timeout (nothing received for 60 s)") == 408);
  CHECK(access_session_status("output not read for 30 s (rtmp.limits.output_timeout)") == 408);
  CHECK(access_session_status("closed: connection timeout") == 408);
  CHECK(access_session_status("replaced by a new publisher (conn=4 peer=1.2.3.4:5)") == 409);
  CHECK(access_session_status("player too slow (queue over the hard limit)") == 429);
  CHECK(access_session_status("partial messages over rtmp.limits.reassembly_budget") == 429);
  CHECK(access_session_status("server stopped") == 503);
  CHECK(access_session_status("server stopping") == 503);
}

TEST_CASE("the client without its port; a URL's host") {
  CHECK(access_client("127.0.0.1:5555") == "127.0.0.1");
  CHECK(access_client("[::1]:5555") == "::1");
  CHECK(access_client("[2001:db8::7]:1935") == "2001:db8::7");
  CHECK(access_client("2001:db8::7") == "2001:db8::7");
  CHECK(access_client("10.0.0.1") == "10.0.0.1");
  CHECK(access_url_host("rtmp://127.0.0.1:1935/live") == "127.0.0.1:1935");
  CHECK(access_url_host("http://host/live/cam/index.m3u8") == "host");
  CHECK(access_url_host("rtmp://host?x=1") == "host");
  CHECK(access_url_host("") == "");
  CHECK(access_url_host("live") == "");
}
