// http_judge_upload: an upload is judged on its head (token, name, type, size) before any of its
// body is read, in that order.
#include <doctest/doctest.h>

#include <string>

#include "server/http/upload_responder.hpp"

using namespace sluice;
using namespace sluice::server;

namespace {

config::HttpConfig http_config() {
  config::HttpConfig cfg;
  cfg.upload_token = "s3cret";
  cfg.upload_max_size = 1000;
  return cfg;
}

HttpRequest put(std::initializer_list<std::pair<std::string, std::string>> headers, std::string query = {},
                uint64_t length = 10) {
  HttpRequest r;
  r.method = "PUT";
  r.query = std::move(query);
  r.content_length = length;
  r.has_body = length > 0;
  for (const auto& h : headers) r.headers.push_back(h);
  return r;
}

const std::pair<std::string, std::string> kBearer{"authorization", "Bearer s3cret"};

}  // namespace

TEST_CASE("accepted: the token as a bearer (any case, extra spaces) or in the query") {
  auto cfg = http_config();
  HttpUploadVerdict v = http_judge_upload(put({kBearer}), "sub/clip.mp4", cfg);
  CHECK(v.status == 0);
  CHECK(v.rel == "sub/clip.mp4");
  CHECK(http_judge_upload(put({{"authorization", "bearer   s3cret"}}), "a.flv", cfg).status == 0);
  CHECK(http_judge_upload(put({}, "token=s3cret"), "a%20b.mp4", cfg).rel == "a b.mp4");
}

TEST_CASE("no token: 401 with WWW-Authenticate, not logged") {
  auto cfg = http_config();
  HttpUploadVerdict v = http_judge_upload(put({}), "clip.mp4", cfg);
  CHECK(v.status == 401);
  CHECK(v.message == "uploads need a token (Authorization: Bearer ...)");
  CHECK(v.headers == "WWW-Authenticate: Bearer realm=\"sluice\"\r\n");
  CHECK(v.log_reason.empty());
  CHECK(http_judge_upload(put({{"authorization", "Basic czNjcmV0"}}), "clip.mp4", cfg).status == 401);
}

TEST_CASE("a wrong token: 403, logged") {
  auto cfg = http_config();
  HttpUploadVerdict v = http_judge_upload(put({{"authorization", "Bearer nope"}}), "clip.mp4", cfg);
  CHECK(v.status == 403);
  CHECK(v.message == "wrong token");
  CHECK(v.log_reason == "wrong token");
  CHECK(v.headers.empty());
}

TEST_CASE("names: bad escapes 400, other types 415, unsafe names 400 (logged), checked after the token") {
  auto cfg = http_config();
  CHECK(http_judge_upload(put({kBearer}), "clip%zz.mp4", cfg).status == 400);
  HttpUploadVerdict type = http_judge_upload(put({kBearer}), "notes.txt", cfg);
  CHECK(type.status == 415);
  CHECK(type.message == "this file type may not be uploaded (http.upload.extensions)");
  CHECK(http_judge_upload(put({kBearer}), "CLIP.MP4", cfg).status == 0);  // extensions ignore case
  HttpUploadVerdict unsafe = http_judge_upload(put({kBearer}), "../up.mp4", cfg);
  CHECK(unsafe.status == 400);
  CHECK(unsafe.message == "invalid file name: empty, '.' or '..' path segment");
  CHECK(unsafe.bad_name);
  CHECK_FALSE(unsafe.log_reason.empty());
  CHECK_FALSE(type.bad_name);
  CHECK(http_judge_upload(put({kBearer}), ".hidden.mp4", cfg).status == 400);
  CHECK(http_judge_upload(put({}), "../up.mp4", cfg).status == 401);  // the token first
}

TEST_CASE("names the file system cannot hold: 414 with the reason; control characters: 400") {
  auto cfg = http_config();
  // ".{name}.upload-{16 hex}" must fit in 255 bytes: 230 for the name itself.
  CHECK(http_judge_upload(put({kBearer}), std::string(226, 'a') + ".mp4", cfg).status == 0);
  HttpUploadVerdict file = http_judge_upload(put({kBearer}), std::string(227, 'a') + ".mp4", cfg);
  CHECK(file.status == 414);
  CHECK(file.message == "file name too long: file name longer than 230 bytes");
  CHECK(file.bad_name);
  HttpUploadVerdict folder = http_judge_upload(put({kBearer}), std::string(256, 'd') + "/a.mp4", cfg);
  CHECK(folder.status == 414);
  CHECK(folder.message == "file name too long: folder name longer than 255 bytes");
  CHECK(http_judge_upload(put({kBearer}), std::string(255, 'd') + "/a.mp4", cfg).status == 0);
  std::string deep;
  for (int i = 0; i < 6; ++i) deep += std::string(200, 'd') + "/";
  CHECK(http_judge_upload(put({kBearer}), deep + "a.mp4", cfg).message ==
        "file name too long: path longer than 1024 bytes");
  for (const char* bad : {"a%00b.mp4", "a%01b.mp4", "a%0Ab.mp4", "a%1Fb.mp4", "a%7Fb.mp4", "sub%00/a.mp4"}) {
    CAPTURE(bad);
    HttpUploadVerdict v = http_judge_upload(put({kBearer}), bad, cfg);
    CHECK(v.status == 400);
    CHECK(v.bad_name);
  }
}

TEST_CASE("a declared size over http.upload.max_size: 413, checked last") {
  auto cfg = http_config();
  HttpUploadVerdict v = http_judge_upload(put({kBearer}, {}, 1001), "clip.mp4", cfg);
  CHECK(v.status == 413);
  CHECK(v.message == "larger than http.upload.max_size (1000 bytes)");
  CHECK(http_judge_upload(put({kBearer}, {}, 1000), "clip.mp4", cfg).status == 0);
  CHECK(http_judge_upload(put({kBearer}, {}, 1001), "notes.txt", cfg).status == 415);
}
