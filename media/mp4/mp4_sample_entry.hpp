// The codec of an MP4 track, from the first entry of its sample description box (stsd):
// avc1/avc3 + avcC, hvc1/hev1 + hvcC, mp4a + esds (AAC AudioSpecificConfig, or MPEG-1/2 audio
// object types = MP3), and .mp3. These are the codecs an RTMP player can be sent from an MP4.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "media/codec/flv_audio.hpp"
#include "media/codec/flv_video.hpp"
#include "media/mp4/box_reader.hpp"
#include "base/result.hpp"

namespace sluice::media::mp4 {

inline constexpr uint32_t kHandlerVideo = box_type("vide");
inline constexpr uint32_t kHandlerAudio = box_type("soun");

struct CodecSetup {
  VideoCodec video_codec = VideoCodec::Unknown;
  AudioCodec audio_codec = AudioCodec::Unknown;
  // avcC or hvcC payload (the decoder configuration record), or the AAC AudioSpecificConfig;
  // empty for MP3. Points into the moov bytes.
  std::span<const uint8_t> config;
  uint32_t width = 0;  // from the configuration's SPS, else the sample entry
  uint32_t height = 0;
  uint32_t sample_rate = 0;  // from the AudioSpecificConfig, else the sample entry
  uint8_t channels = 0;
};

// `stsd` was produced by `walker`; `handler` is the track's hdlr type. nullopt when the first
// sample entry is not a codec listed above (the track is then not played), or lacks the
// configuration its codec needs. Errors for entries too short for their fixed fields.
Result<std::optional<CodecSetup>> parse_sample_description(const Box& stsd, const BoxWalker& walker, uint32_t handler);

}  // namespace sluice::media::mp4
