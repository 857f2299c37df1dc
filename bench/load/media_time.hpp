// The media time at which an HLS part or segment starts, read from its first bytes, so a reader
// can tell when the publisher sent that media (LatencyTracker) and how old it is on arrival.
//
//  - fMP4 (moof ... ): the smallest tfdt baseMediaDecodeTime over the fragment's track runs, in the
//    track's timescale (90 kHz for Sluice; `timescale` converts it to ms);
//  - MPEG-TS: the DTS (or PTS when there is no DTS) of the first video PES, else of the first
//    audio PES, 90 kHz.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

namespace sluice::bench {

struct MediaStart {
  uint64_t ticks = 0;  // in the timescale below
  uint32_t timescale = 90000;
  bool video = false;  // MPEG-TS: from a video PES; fMP4: from track 1 (video when the stream has one)
  uint32_t ms() const { return static_cast<uint32_t>(ticks * 1000 / timescale); }
};

// `bytes` is the beginning of the part (a few KiB are enough: the moof comes first).
std::optional<MediaStart> fmp4_media_start(std::span<const uint8_t> bytes, uint32_t timescale = 90000);
std::optional<MediaStart> ts_media_start(std::span<const uint8_t> bytes);

}  // namespace sluice::bench
