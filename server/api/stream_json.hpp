// One live stream as the stats API shows it (docs/http.md, GET /api/v1/streams): the figures one
// worker knows, gathered from its registry by server/stats_api.cpp, and their two forms: an
// nlohmann::json object (the worker snapshots other workers merge, /metrics, /api/v1/server) and
// the same object written straight as text for the streams list (server/json_writer.hpp), which
// is answered often enough that building trees was most of its cost (issue 16). Both are built
// here, next to each other, and tests/unit/server/stream_json_test.cpp checks that they agree.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string_view>

#include "media/codec_info.hpp"
#include "server/api/json_writer.hpp"

namespace sluice::server {

struct StreamFacts {
  std::string_view key;        // "app/name"
  bool live = false;           // the hub has a publisher (on some worker)
  bool has_publisher = false;  // ... on this worker: then publisher_id and publisher_address
  uint64_t publisher_id = 0;
  std::string_view publisher_address;
  int64_t publisher_since_unix_ms = 0;  // when this publisher began (wall clock)
  uint32_t takeovers = 0;               // publishers that took the name over from another (docs/live.md)
  size_t players = 0;
  media::CodecInfo info;
  uint64_t frames_in = 0;
  uint64_t bytes_in = 0;
  uint64_t keyframes_in = 0;
  uint64_t publish_sessions = 0;
  size_t gop_frames = 0;
  uint64_t gop_bytes = 0;
  double bitrate_in_kbps = 0;  // as shown (rounded to 0.1)
  uint64_t dropped_frames = 0;
  // On the worker the publication is fed on: what the publisher really sends
  // (server/api/stream_health_json.hpp); null elsewhere.
  nlohmann::json health;
};

// What the list adds to a worker's view: the HLS figures (server/hls_api.hpp) and HTTP-FLV readers.
struct StreamListExtras {
  const nlohmann::json* hls = nullptr;          // null when absent
  const nlohmann::json* hls_variant = nullptr;  // null when absent
  size_t http_flv_players = 0;
};

// {"name", "app", "stream", "live", "publisher", "players", "video", "audio", "summary", ...}.
nlohmann::json stream_facts_json(const StreamFacts& f);
// The text of stream_facts_json(f) with extras' "hls", "hls_variant" and "http_flv_players"
// added, as dump(2) writes it at w's depth.
void write_stream(JsonWriter& w, const StreamFacts& f, const StreamListExtras& extras);

}  // namespace sluice::server
