// What a snapshot request may ask (docs/snapshots.md), checked before anything is decoded:
// the format (snapshot.jpg or snapshot.webp), width=16..3840 (default: the source's),
// quality=1..100 (default 80). Sans-I/O, unit-tested in
// tests/unit/server/snapshot/snapshot_params_test.cpp.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace sluice::server {

enum class SnapshotFormat : uint8_t { Jpeg, Webp };

struct SnapshotParams {
  static constexpr uint32_t kMinWidth = 16;
  static constexpr uint32_t kMaxWidth = 3840;
  static constexpr uint32_t kDefaultQuality = 80;
  uint32_t width = 0;  // 0: the source's
  uint32_t quality = kDefaultQuality;
  SnapshotFormat format = SnapshotFormat::Jpeg;
};

// The parameters from the values of width= and quality= (absent: nullopt), or why they are refused.
struct SnapshotParamsParsed {
  SnapshotParams params;
  std::string error;  // non-empty: answer 400 with it
};
SnapshotParamsParsed parse_snapshot_params(const std::optional<std::string>& width,
                                           const std::optional<std::string>& quality);

// The picture's size: `asked` wide (never wider than the source: no upscaling; 0 = the source's),
// the height keeping the aspect, both even (4:2:0 chroma) and at least 2.
struct SnapshotSize {
  uint32_t width = 0;
  uint32_t height = 0;
};
SnapshotSize snapshot_size(uint32_t source_width, uint32_t source_height, uint32_t asked);

// libjpeg's quality (1..100) as the MJPEG encoder's quantiser scale (1..31): that encoder scales the
// MPEG-1 intra matrix by qscale/8, libjpeg scales the JPEG tables by (q < 50 ? 5000/q : 200-2q)%,
// and the JPEG luminance table is about 1.7 times the MPEG-1 matrix.
uint32_t mjpeg_qscale(uint32_t quality);

}  // namespace sluice::server
