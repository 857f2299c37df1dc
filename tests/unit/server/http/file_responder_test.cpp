// http_file_reply: how a download is answered once its file is open (preconditions, one Range,
// or the whole file), and the exact head lines it gets.
#include <doctest/doctest.h>

#include <string>

#include "server/http/file_responder.hpp"
#include "server/http/util.hpp"

using namespace sluice::server;

namespace {

constexpr uint64_t kSize = 1000;
constexpr int64_t kMtimeNs = 1'700'000'000'123'456'789;

HttpRequest request(std::initializer_list<std::pair<std::string, std::string>> headers, std::string method = "GET") {
  HttpRequest r;
  r.method = std::move(method);
  r.path = "/vod/clip.mp4";
  for (const auto& h : headers) r.headers.push_back(h);
  return r;
}

std::string etag() { return http_make_etag(kSize, kMtimeNs); }

std::string validators() {
  return "ETag: " + etag() + "\r\nLast-Modified: " + http_format_date(kMtimeNs / 1'000'000'000) + "\r\n";
}

std::string file_headers() {
  return "Content-Type: " + std::string(http_content_type_for("clip.mp4")) + "\r\nAccept-Ranges: bytes\r\n" +
         validators() + "Access-Control-Allow-Origin: *\r\n";
}

}  // namespace

TEST_CASE("the whole file: 200 with its type, validators and CORS") {
  HttpFileReply r = http_file_reply(request({}), "clip.mp4", kSize, kMtimeNs);
  CHECK(r.status == 200);
  CHECK(r.error.empty());
  CHECK(r.first == 0);
  CHECK(r.length == kSize);
  CHECK(r.headers == file_headers());
}

TEST_CASE("one range: 206 with Content-Range") {
  HttpFileReply r = http_file_reply(request({{"range", "bytes=10-19"}}), "clip.mp4", kSize, kMtimeNs);
  CHECK(r.status == 206);
  CHECK(r.first == 10);
  CHECK(r.length == 10);
  CHECK(r.headers == file_headers() + "Content-Range: bytes 10-19/1000\r\n");
  HttpFileReply tail = http_file_reply(request({{"range", "bytes=-100"}}), "clip.mp4", kSize, kMtimeNs);
  CHECK(tail.status == 206);
  CHECK(tail.first == 900);
  CHECK(tail.length == 100);
}

TEST_CASE("ranges that do not apply: HEAD, two Range headers, an If-Range that does not match") {
  CHECK(http_file_reply(request({{"range", "bytes=0-9"}}, "HEAD"), "clip.mp4", kSize, kMtimeNs).status == 200);
  HttpFileReply two =
      http_file_reply(request({{"range", "bytes=0-9"}, {"range", "bytes=20-29"}}), "clip.mp4", kSize, kMtimeNs);
  CHECK(two.status == 200);
  CHECK(two.length == kSize);
  HttpFileReply stale =
      http_file_reply(request({{"range", "bytes=0-9"}, {"if-range", "\"other\""}}), "clip.mp4", kSize, kMtimeNs);
  CHECK(stale.status == 200);
  HttpFileReply fresh =
      http_file_reply(request({{"range", "bytes=0-9"}, {"if-range", etag()}}), "clip.mp4", kSize, kMtimeNs);
  CHECK(fresh.status == 206);
}

TEST_CASE("an unsatisfiable range: 416 with the size, as an error") {
  HttpFileReply r = http_file_reply(request({{"range", "bytes=5000-"}}), "clip.mp4", kSize, kMtimeNs);
  CHECK(r.status == 416);
  CHECK(r.error == "range not satisfiable");
  CHECK(r.length == 0);
  CHECK(r.headers == "Content-Range: bytes */1000\r\n" + file_headers());
}

TEST_CASE("preconditions: 304 with validators only, 412 as an error") {
  HttpFileReply nm = http_file_reply(request({{"if-none-match", etag()}}), "clip.mp4", kSize, kMtimeNs);
  CHECK(nm.status == 304);
  CHECK(nm.error.empty());
  CHECK(nm.headers == validators() + "Access-Control-Allow-Origin: *\r\n");
  HttpFileReply failed = http_file_reply(request({{"if-match", "\"other\""}}), "clip.mp4", kSize, kMtimeNs);
  CHECK(failed.status == 412);
  CHECK(failed.error == "precondition failed");
  CHECK(failed.headers == validators() + "Access-Control-Allow-Origin: *\r\n");
  // Preconditions come before the range.
  HttpFileReply both =
      http_file_reply(request({{"if-none-match", etag()}, {"range", "bytes=0-9"}}), "clip.mp4", kSize, kMtimeNs);
  CHECK(both.status == 304);
}

TEST_CASE("an empty file: 200 with no body to send") {
  HttpFileReply r = http_file_reply(request({}), "empty.mp4", 0, kMtimeNs);
  CHECK(r.status == 200);
  CHECK(r.length == 0);
}
