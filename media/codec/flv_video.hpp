// FLV / RTMP video tag header: legacy (FrameType | CodecID) and Enhanced RTMP ExVideoTagHeader,
// including ModEx and multitrack (docs/protocol.md, "Legacy audio and video tag headers",
// "ExVideoTagHeader", "Multitrack", "ModEx").
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "media/codec/enhanced.hpp"
#include "base/result.hpp"

namespace sluice::media {

enum class VideoCodec : uint8_t { Unknown, H263, Screen, Vp6, Vp6Alpha, ScreenV2, Avc, Hevc, Vvc, Av1, Vp9, Vp8 };

enum class VideoFrameType : uint8_t {
  Reserved = 0,
  Key = 1,
  Inter = 2,
  DisposableInter = 3,
  GeneratedKey = 4,
  Command = 5,
};

// Enhanced packet types; legacy AVC/HEVC AVCPacketType 0/1/2 map onto the first three.
enum class VideoPacketType : uint8_t {
  SequenceStart = 0,
  CodedFrames = 1,
  SequenceEnd = 2,
  CodedFramesX = 3,
  Metadata = 4,
  Mpeg2TsSequenceStart = 5,
  Multitrack = 6,
  ModEx = 7,
};

inline constexpr uint8_t kLegacyVideoCodecAvc = 7;
inline constexpr uint8_t kLegacyVideoCodecHevc = 12;  // unofficial, Chinese CDNs

struct VideoTagHeader {
  bool enhanced = false;
  VideoFrameType frame_type = VideoFrameType::Reserved;
  VideoPacketType packet_type = VideoPacketType::CodedFrames;
  uint8_t legacy_codec_id = 0;  // legacy header only
  bool has_command = false;     // frame type Command: no body, just `command`
  uint8_t command = 0;          // 0 StartSeek, 1 EndSeek
  bool multitrack = false;
  AvMultitrackType multitrack_type = AvMultitrackType::OneTrack;
  uint32_t timestamp_offset_nanos = 0;  // ModEx TimestampOffsetNano
  TrackList tracks;                     // empty for commands

  // A coded key frame: the frame type says key and the packet carries picture data. Sequence
  // headers (legacy 0x17 0x00) are not key frames in this sense: they cannot start a GOP.
  bool is_keyframe() const;
  bool is_sequence_header() const;
  // Codec of the first track (the message's only one unless multitrack).
  VideoCodec codec() const;
};

Result<VideoTagHeader> parse_video_tag(std::span<const uint8_t> body);

VideoCodec video_codec_from_fourcc(uint32_t code);
VideoCodec video_codec_from_legacy_id(uint8_t codec_id);
std::string_view video_codec_name(VideoCodec codec);  // "H264", "HEVC", "AV1", ...

}  // namespace sluice::media
