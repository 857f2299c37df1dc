// apps.NAME.record: what a live app records and where (docs/recording.md).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace sluice::config {

enum class RecordMode : uint8_t {
  Off,     // nothing is recorded
  All,     // every publication, from its first frame
  Manual,  // only what the API starts (POST /api/v1/recordings/<app>/<stream>)
};

struct RecordConfig {
  RecordMode mode = RecordMode::Off;
  std::string dir;  // Absolute after loading; required unless mode is off.
  // The file name below dir, without ".flv" (config/record_template.hpp): {app}, {stream}, {seq}
  // and strftime conversions (UTC).
  std::string path = "{app}/{stream}-%Y%m%d-%H%M%S";
  // Segments: a recording is cut at the first keyframe past this duration or size (0: never).
  std::chrono::milliseconds segment_duration{0};
  uint64_t segment_bytes = 0;
  // Retention: finished recordings older than keep_age are removed, then the oldest ones while
  // all of them together exceed keep_bytes (0: keep forever / no size bound).
  std::chrono::milliseconds keep_age{0};
  uint64_t keep_bytes = 0;
  bool mp4 = false;  // a faststart MP4 copy next to each finished FLV

  bool enabled() const { return mode != RecordMode::Off; }
  bool operator==(const RecordConfig&) const = default;
};

}  // namespace sluice::config
