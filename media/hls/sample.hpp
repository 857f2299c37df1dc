// What the HLS muxers (media/ts/, media/fmp4/) are fed: a stream's track setup, taken from its
// sequence headers, and its samples, taken from its FLV tag bodies (sample_source.hpp does both).
//
// Times are 90 kHz ticks, the MPEG-TS clock, for both containers and both tracks: the live
// stream's millisecond timestamps times 90, unwrapped to 64 bits by the caller. A sample's
// duration is the distance to the next sample of its track, so the segmenter hands a sample on
// only once the next one has arrived.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace sluice::media::hls {

inline constexpr uint32_t kClock = 90000;  // ticks per second

enum class Codec : uint8_t { None, Avc, Hevc, Aac };

struct TrackSetup {
  Codec codec = Codec::None;
  // The AVCDecoderConfigurationRecord (avcC), HEVCDecoderConfigurationRecord (hvcC) or the AAC
  // AudioSpecificConfig, as the FLV sequence header carries it.
  std::vector<uint8_t> config;
  uint32_t width = 0;  // video: from the SPS (0 when unknown)
  uint32_t height = 0;
  uint32_t sample_rate = 0;  // audio: from the AudioSpecificConfig
  uint8_t channels = 0;
  uint8_t object_type = 0;  // audio: AAC audio object type (2 = LC)
  bool present() const { return codec != Codec::None; }
};

struct StreamSetup {
  TrackSetup video;  // Avc or Hevc, or None
  TrackSetup audio;  // Aac, or None
};

struct Sample {
  bool video = false;
  bool keyframe = false;  // video: a random access point (IDR/IRAP)
  uint64_t dts = 0;       // decode time, 90 kHz
  int32_t cts = 0;        // composition offset, 90 kHz: pts = dts + cts (video only; never < 0 from FLV)
  uint32_t duration = 0;  // 90 kHz, to the next sample of the track
  // The raw sample: for video, NAL units each preceded by a big-endian length of the config's
  // lengthSizeMinusOne + 1 bytes (AVCC form, as in FLV and MP4); for AAC one raw access unit.
  std::span<const uint8_t> data;
};

}  // namespace sluice::media::hls
