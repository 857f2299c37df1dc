// server/stream_json.hpp: a stream of GET /api/v1/streams written as text is the same text as its
// nlohmann::json object with the list's HLS and HTTP-FLV figures added, dumped as the API dumps
// (same keys, order, values and types), whatever the stream has (video, audio, a publisher, HLS).
#include <doctest/doctest.h>

#include <string>

#include "server/api/stream_json.hpp"

using namespace sluice;
using namespace sluice::server;
using nlohmann::json;

namespace {

std::string dumped(const json& j) { return j.dump(2, ' ', false, json::error_handler_t::replace); }

json expected(const StreamFacts& f, const StreamListExtras& x) {
  json j = stream_facts_json(f);
  j["hls"] = x.hls ? *x.hls : json();
  j["hls_variant"] = x.hls_variant ? *x.hls_variant : json();
  j["http_flv_players"] = x.http_flv_players;
  return j;
}

std::string written(const StreamFacts& f, const StreamListExtras& x, bool in_array) {
  std::string out;
  JsonWriter w(out);
  if (in_array) w.begin_array();
  write_stream(w, f, x);
  if (in_array) w.end_array();
  return out;
}

StreamFacts full() {
  StreamFacts f;
  f.key = "live/cam1";
  f.live = true;
  f.has_publisher = true;
  f.publisher_id = 17;
  f.publisher_address = "127.0.0.1:51234";
  f.publisher_since_unix_ms = 1765012345678;
  f.takeovers = 4;
  f.players = 3;
  f.info.video_codec = "H264";
  f.info.video_profile = "High";
  f.info.video_level = 31;
  f.info.width = 1280;
  f.info.height = 720;
  f.info.audio_codec = "AAC";
  f.info.audio_profile = "AAC-LC";
  f.info.sample_rate = 44100;
  f.info.channels = 2;
  f.frames_in = 123456;
  f.bytes_in = 98765432101;
  f.keyframes_in = 300;
  f.publish_sessions = 2;
  f.gop_frames = 75;
  f.gop_bytes = 812345;
  f.bitrate_in_kbps = 2563.7;
  f.dropped_frames = 9;
  return f;
}

}  // namespace

TEST_CASE("a live stream with video, audio and a publisher, with and without HLS") {
  StreamFacts f = full();
  StreamListExtras none;
  CHECK(written(f, none, false) == dumped(expected(f, none)));
  json hls{{"worker", 0},   {"viewers", 4},        {"ready", true}, {"variant", "fmp4"}, {"target_duration_s", 2.0},
           {"segments", 6}, {"bytes_held", 123456}};
  json variant = "fmp4";
  StreamListExtras with{&hls, &variant, 5};
  CHECK(written(f, with, false) == dumped(expected(f, with)));
  CHECK(written(f, with, true) == dumped(json::array({expected(f, with)})));
}

TEST_CASE("a stream waited for: no publisher, no media yet, no slash in its key") {
  StreamFacts f;
  f.key = "lonely";
  json variant;  // null: the app has no HLS
  StreamListExtras x{nullptr, &variant, 0};
  CHECK(written(f, x, true) == dumped(json::array({expected(f, x)})));
  f.key = "app/";
  f.bitrate_in_kbps = 0.1;
  CHECK(written(f, x, false) == dumped(expected(f, x)));
}

TEST_CASE("audio only, video only, and names that need escaping") {
  StreamFacts f = full();
  f.info.video_codec = {};
  f.key = "live/\"quoted\" \\ \x01 caf\xc3\xa9";
  f.publisher_address = "[::1]:1935";
  StreamListExtras x;
  CHECK(written(f, x, false) == dumped(expected(f, x)));
  f = full();
  f.info.audio_codec = {};
  f.live = false;
  f.has_publisher = false;
  f.key = "live/bad\xff";
  CHECK(written(f, x, true) == dumped(json::array({expected(f, x)})));
}
