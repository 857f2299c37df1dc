// A stream's "health" in the API (docs/api.md, "Stream health"): what the publisher really
// sends (media/stream_health.hpp), and beside it what its onMetaData claims.
#pragma once

#include <nlohmann/json.hpp>

#include "media/frame.hpp"
#include "media/stream_health.hpp"

namespace sluice::server {

// {"video": {...} | null, "audio": {...} | null, "av_drift_ms", "timestamp_jumps", "publish_starts",
//  "takeovers", "claimed": {"fps", "video_kbps", "audio_kbps", "audio_sample_rate"} (what the metadata has)}.
nlohmann::json stream_health_json(const media::StreamHealth::Figures& h, const media::FramePtr& metadata);

}  // namespace sluice::server
