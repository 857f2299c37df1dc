#include "server/api/stream_json.hpp"

namespace sluice::server {

namespace {

std::string_view app_of(std::string_view key) { return key.substr(0, key.find('/')); }

std::string_view stream_of(std::string_view key) {
  size_t slash = key.find('/');
  return slash == std::string_view::npos ? key : key.substr(slash + 1);
}

}  // namespace

nlohmann::json stream_facts_json(const StreamFacts& f) {
  using nlohmann::json;
  const media::CodecInfo& info = f.info;
  json j;
  j["name"] = f.key;
  j["app"] = app_of(f.key);
  j["stream"] = stream_of(f.key);
  j["live"] = f.live;
  if (f.has_publisher) {
    j["publisher"] =
        json{{"id", f.publisher_id}, {"address", f.publisher_address}, {"since_unix_ms", f.publisher_since_unix_ms}};
  } else {
    j["publisher"] = nullptr;
  }
  j["players"] = f.players;
  if (info.has_video()) {
    j["video"] = json{{"codec", info.video_codec},
                      {"profile", info.video_profile},
                      {"level", info.video_level},
                      {"width", info.width},
                      {"height", info.height}};
  } else {
    j["video"] = nullptr;
  }
  if (info.has_audio()) {
    j["audio"] = json{{"codec", info.audio_codec},
                      {"profile", info.audio_profile},
                      {"sample_rate", info.sample_rate},
                      {"channels", info.channels}};
  } else {
    j["audio"] = nullptr;
  }
  j["summary"] = info.summary();
  j["frames_in"] = f.frames_in;
  j["bytes_in"] = f.bytes_in;
  j["keyframes_in"] = f.keyframes_in;
  j["publish_sessions"] = f.publish_sessions;
  j["gop_cache"] = json{{"frames", f.gop_frames}, {"bytes", f.gop_bytes}};
  j["bitrate_in_kbps"] = f.bitrate_in_kbps;
  j["dropped_frames"] = f.dropped_frames;
  j["takeovers"] = f.takeovers;
  j["health"] = f.health;
  return j;
}

void write_stream(JsonWriter& w, const StreamFacts& f, const StreamListExtras& extras) {
  // The keys in the order a dumped nlohmann::json object has them: sorted.
  const media::CodecInfo& info = f.info;
  auto json_or_null = [&](std::string_view k, const nlohmann::json* v) {
    w.key(k);
    if (v != nullptr) {
      w.value(*v);
    } else {
      w.null();
    }
  };
  w.begin_object();
  w.member_string("app", app_of(f.key));
  w.key("audio");
  if (info.has_audio()) {
    w.begin_object()
        .member_number("channels", info.channels)
        .member_string("codec", info.audio_codec)
        .member_string("profile", info.audio_profile)
        .member_number("sample_rate", info.sample_rate)
        .end_object();
  } else {
    w.null();
  }
  w.member_number("bitrate_in_kbps", f.bitrate_in_kbps);
  w.member_number("bytes_in", f.bytes_in);
  w.member_number("dropped_frames", f.dropped_frames);
  w.member_number("frames_in", f.frames_in);
  w.key("gop_cache")
      .begin_object()
      .member_number("bytes", f.gop_bytes)
      .member_number("frames", f.gop_frames)
      .end_object();
  json_or_null("health", f.health.is_null() ? nullptr : &f.health);
  json_or_null("hls", extras.hls);
  json_or_null("hls_variant", extras.hls_variant);
  w.member_number("http_flv_players", extras.http_flv_players);
  w.member_number("keyframes_in", f.keyframes_in);
  w.member_bool("live", f.live);
  w.member_string("name", f.key);
  w.member_number("players", f.players);
  w.member_number("publish_sessions", f.publish_sessions);
  w.key("publisher");
  if (f.has_publisher) {
    w.begin_object()
        .member_string("address", f.publisher_address)
        .member_number("id", f.publisher_id)
        .member_number("since_unix_ms", f.publisher_since_unix_ms)
        .end_object();
  } else {
    w.null();
  }
  w.member_string("stream", stream_of(f.key));
  w.member_string("summary", info.summary());
  w.member_number("takeovers", f.takeovers);
  w.key("video");
  if (info.has_video()) {
    w.begin_object()
        .member_string("codec", info.video_codec)
        .member_number("height", info.height)
        .member_number("level", info.video_level)
        .member_string("profile", info.video_profile)
        .member_number("width", info.width)
        .end_object();
  } else {
    w.null();
  }
  w.end_object();
}

}  // namespace sluice::server
