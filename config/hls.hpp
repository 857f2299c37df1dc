// apps.NAME.hls: HLS and Low-Latency HLS of a live app's streams, muxed in memory (docs/hls.md).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace sluice::config {

enum class HlsVariant : uint8_t {
  MpegTs,      // MPEG-TS segments (RFC 8216 version 3): every player since 2009
  Fmp4,        // fragmented MP4 segments
  LowLatency,  // fMP4 segments and parts, blocking playlist reload (RFC 8216bis)
};

struct HlsConfig {
  bool enabled = false;
  HlsVariant variant = HlsVariant::LowLatency;
  // Target segment duration: a segment ends at the first keyframe at or after it (1s..60s).
  std::chrono::milliseconds segment{2000};
  // Low latency: the part target (50ms..segment/2).
  std::chrono::milliseconds part{200};
  uint32_t window = 6;  // segments listed (2..100)
  // A stream nobody asks for has no muxer: the first playlist request starts it.
  bool on_demand = true;
  // A muxer nobody asked for this long stops (5s..1h); only with on_demand.
  std::chrono::milliseconds idle_close{60000};
  // Also write the segments and a playlist to dir/APP/NAME/ (an origin for a CDN or a web
  // server); empty: memory only. A stream's muxer then runs from its publish.
  std::string dir;

  // Whether a publish starts the muxer (instead of the first request).
  bool starts_at_publish() const { return !on_demand || !dir.empty(); }

  bool operator==(const HlsConfig&) const = default;
};

}  // namespace sluice::config
