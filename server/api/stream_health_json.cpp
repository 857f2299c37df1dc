#include "server/api/stream_health_json.hpp"

#include <cmath>

#include "protocol/amf0.hpp"

namespace sluice::server {

namespace {

using nlohmann::json;

double round1(double v) { return std::round(v * 10) / 10; }
double seconds(uint32_t ms) { return static_cast<double>(ms) / 1000; }

json track_json(const media::StreamHealth::Track& t, bool video) {
  if (!t.present) return nullptr;
  json j{{"kbps_1s", round1(t.kbps_1s)},         {"kbps_10s", round1(t.kbps_10s)},
         {"fps", std::round(t.fps * 100) / 100}, {"frames", t.frames},
         {"timestamps_back", t.backwards},       {"idle_ms", t.idle_ms ? json(*t.idle_ms) : json(nullptr)}};
  if (video) {
    j["since_keyframe_s"] =
        t.since_keyframe_ms ? json(static_cast<double>(*t.since_keyframe_ms) / 1000) : json(nullptr);
    j["keyframe_interval"] = t.keyframe_interval_last_ms == 0 ? json(nullptr)
                                                              : json{{"last_s", seconds(t.keyframe_interval_last_ms)},
                                                                     {"mean_s", seconds(t.keyframe_interval_mean_ms)},
                                                                     {"max_s", seconds(t.keyframe_interval_max_ms)}};
  }
  return j;
}

// What an encoder's onMetaData says of itself (framerate, videodatarate, audiodatarate: kbit/s).
json claimed_json(const media::FramePtr& metadata) {
  json out = json::object();
  if (!metadata) return out;
  auto values = protocol::amf::decode_amf0_all(metadata->payload.span());
  if (!values || values->size() < 2 || !(*values)[1].is_object_like()) return out;
  const protocol::amf::Value& m = (*values)[1];
  auto number = [&](std::string_view key, const char* name) {
    const protocol::amf::Value* v = m.find(key);
    if (v != nullptr && v->is_number()) out[name] = v->as_number();
  };
  number("framerate", "fps");
  number("videodatarate", "video_kbps");
  number("audiodatarate", "audio_kbps");
  number("audiosamplerate", "audio_sample_rate");
  return out;
}

}  // namespace

json stream_health_json(const media::StreamHealth::Figures& h, const media::FramePtr& metadata) {
  return json{{"video", track_json(h.video, true)},
              {"audio", track_json(h.audio, false)},
              {"av_drift_ms", h.av_drift_ms ? json(*h.av_drift_ms) : json(nullptr)},
              {"timestamp_jumps", h.timestamp_jumps},
              {"publish_starts", h.publish_starts},
              {"takeovers", h.takeovers},
              {"claimed", claimed_json(metadata)}};
}

}  // namespace sluice::server
