// What an FLV audio or video tag body is to the MP4 copy of a recording (mp4_layout.hpp), read
// from its first bytes: a frame (and how many bytes of FLV codec header precede the raw sample), a
// codec configuration, or nothing to copy (docs/protocol.md, "Legacy audio and video tag
// headers", "ExVideoTagHeader", "ExAudioTagHeader").
//
// The forms understood, with the bytes before the MP4 sample:
//   legacy AVC / HEVC (codec id 7 / 12)    NALU (1): 5        sequence header (0): 5, then the record
//   Enhanced RTMP avc1 / hvc1              CodedFrames (1): 8  CodedFramesX (3): 5  SequenceStart (0): 5
//   legacy AAC (sound format 10)           raw (1): 2          sequence header (0): 2, then the ASC
//   legacy MP3 (sound format 2 and 14)     1
//   Enhanced RTMP mp4a / .mp3 audio        CodedFrames (1): 5  SequenceStart (0, mp4a): 5
// AVC/HEVC end of sequence, Enhanced SequenceEnd and Metadata, video commands and empty frames
// carry no sample. Multitrack and ModEx packets are not copied (their layout needs the whole
// body). Any other codec is a frame of an unsupported codec.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "media/codec/flv_audio.hpp"
#include "media/codec/flv_video.hpp"

namespace sluice::media::record {

// Body bytes classify_flv_packet() needs: the longest header (8) plus an MP3 frame header after
// the Enhanced audio one (5 + 4), rounded up like vod::kFlvClassifyBytes.
inline constexpr size_t kFlvPacketHeadBytes = 16;

enum class FlvPacketKind : uint8_t {
  Frame,     // the bytes after `prefix` are one MP4 sample
  Config,    // a sequence header: the bytes after `prefix` are the avcC/hvcC record or the ASC
  NoMedia,   // nothing to copy and nothing lost (end of sequence, commands, empty frames)
  Unusable,  // a packet the copy cannot take (multitrack, ModEx, cut short)
};

// The codecs an MP4 copy is made of; None is any other (the track is then left out).
enum class Mp4Codec : uint8_t { None, Avc, Hevc, Aac, Mp3 };

std::string_view mp4_codec_name(Mp4Codec c);  // "H.264", "HEVC", "AAC", "MP3"

struct FlvPacket {
  FlvPacketKind kind = FlvPacketKind::Unusable;
  Mp4Codec codec = Mp4Codec::None;
  // The FLV codec as media/codec names it, for messages about unsupported ones.
  VideoCodec video_codec = VideoCodec::Unknown;
  AudioCodec audio_codec = AudioCodec::Unknown;
  uint8_t prefix = 0;  // FLV codec header bytes before the sample or the configuration
};

// `type` is the FLV tag type (8 or 9); `head` the first min(body size, kFlvPacketHeadBytes) bytes
// of the body; `body_size` the whole body's size (a frame with no byte after its prefix is
// NoMedia, a body shorter than its header Unusable).
FlvPacket classify_flv_packet(uint8_t type, std::span<const uint8_t> head, uint32_t body_size);

// The MP4 description of an MP3 track, from the head of its first frame: the MPEG audio frame
// header after the prefix, else (no valid header there) the legacy FLV rate and channel bits.
struct Mp3Setup {
  uint8_t object_type = 0x6B;  // esds objectTypeIndication: 0x6B MPEG-1 audio, 0x69 MPEG-2 (and 2.5)
  uint32_t sample_rate = 44100;
  uint8_t channels = 2;
};
Mp3Setup mp3_setup(std::span<const uint8_t> head, const FlvPacket& p);

// The name of the packet's codec for a message: "VP6", "Speex", ... ("unknown" when none).
std::string_view flv_packet_codec_name(uint8_t type, const FlvPacket& p);

}  // namespace sluice::media::record
