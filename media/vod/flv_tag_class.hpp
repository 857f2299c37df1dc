// What the FLV indexer needs to know about a tag, read from the first bytes of its body only, so
// that a file scan never has to read whole frames (docs/protocol.md,
// "FLV framing", "Legacy audio and video tag headers", "ExVideoTagHeader", "ExAudioTagHeader").
//
// media/codec's parse_video_tag()/parse_audio_tag() want the whole body (they walk every track
// of a multitrack message); this is the cheap prefix-only subset: frame type, packet type,
// composition time, codec.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "media/codec/flv_audio.hpp"
#include "media/codec/flv_video.hpp"

namespace sluice::media::vod {

// Body bytes classify_flv_tag() looks at: an Enhanced RTMP video header with FourCC and SI24
// CTS is 8 bytes, and "onMetaData" as an AMF0 string is 13.
inline constexpr size_t kFlvClassifyBytes = 16;

struct FlvTagClass {
  bool keyframe = false;         // video: a coded key frame (not a sequence header)
  bool sequence_header = false;  // AVC/HEVC/AAC sequence header, Enhanced SequenceStart
  bool on_metadata = false;      // script: "onMetaData"
  int32_t cts_ms = 0;            // video CodedFrames composition time
  VideoCodec video_codec = VideoCodec::Unknown;
  AudioCodec audio_codec = AudioCodec::Unknown;
};

// `head` is the first min(DataSize, kFlvClassifyBytes) bytes of a tag body of FLV tag `type`.
// Never fails: what cannot be recognised is reported as a plain, non-key frame.
FlvTagClass classify_flv_tag(uint8_t type, std::span<const uint8_t> head);

}  // namespace sluice::media::vod
