// What an FLV audio, video or script tag is, read from the first bytes of its body only, so that
// a file scan never has to read whole frames (docs/protocol.md, "FLV framing", "Legacy audio and
// video tag headers", "ExVideoTagHeader", "ExAudioTagHeader"). One reading serves every user of
// tag heads: the VOD indexer and the recording scanner (keyframes, sequence headers, onMetaData,
// composition times), the MP4 copy of a recording and the HLS sample source (which bytes of the
// body are the raw sample, and of which codec).
//
// media/codec's parse_video_tag()/parse_audio_tag() want the whole body (they walk every track
// of a multitrack message); this is the cheap prefix-only subset.
//
// The payload forms, with the bytes of FLV codec header before the raw sample (`prefix`):
//   legacy AVC / HEVC (codec id 7 / 12)    NALU (1): 5        sequence header (0): 5, then the record
//   Enhanced RTMP avc1 / hvc1              CodedFrames (1): 8  CodedFramesX (3): 5  SequenceStart (0): 5
//   legacy AAC (sound format 10)           raw (1): 2          sequence header (0): 2, then the ASC
//   legacy MP3 (sound format 2 and 14)     1
//   Enhanced RTMP mp4a / .mp3 audio        CodedFrames (1): 5  SequenceStart (0, mp4a): 5
// AVC/HEVC end of sequence, Enhanced SequenceEnd and Metadata, video commands and empty frames
// carry no sample. Multitrack and ModEx packets are not taken apart (their layout needs the whole
// body): their payload is Unusable. Any other codec is a frame of a codec that MP4 does not carry.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "media/codec/flv_audio.hpp"
#include "media/codec/flv_video.hpp"

namespace sluice::media {

// Body bytes read_flv_tag_head() looks at: an Enhanced RTMP video header with FourCC and SI24 CTS
// is 8 bytes, an MP3 frame header after the Enhanced audio one 5 + 4, and "onMetaData" as an
// AMF0 string 13.
inline constexpr size_t kFlvTagHeadBytes = 16;

// What the body bytes after FlvTagHead::prefix are.
enum class FlvPacketKind : uint8_t {
  Frame,     // one raw sample (an MP4 sample)
  Config,    // a sequence header: the avcC/hvcC record or the AudioSpecificConfig
  NoMedia,   // nothing to copy and nothing lost (end of sequence, commands, empty frames)
  Unusable,  // a packet whose sample cannot be taken out (multitrack, ModEx, cut short)
};

// The codecs an MP4 (or fMP4, TS) copy is made of; None is any other.
enum class Mp4Codec : uint8_t { None, Avc, Hevc, Aac, Mp3 };

std::string_view mp4_codec_name(Mp4Codec c);  // "H.264", "HEVC", "AAC", "MP3"

struct FlvTagHead {
  // What the tag is to a player or an index.
  bool keyframe = false;         // video: a coded key frame (not a sequence header)
  bool sequence_header = false;  // AVC/HEVC/AAC sequence header, Enhanced SequenceStart
  bool on_metadata = false;      // script: "onMetaData"
  int32_t cts_ms = 0;            // video CodedFrames composition time
  VideoCodec video_codec = VideoCodec::Unknown;
  AudioCodec audio_codec = AudioCodec::Unknown;
  // Where its raw sample is (audio and video tags; Unusable for any other type).
  FlvPacketKind kind = FlvPacketKind::Unusable;
  Mp4Codec codec = Mp4Codec::None;
  uint8_t prefix = 0;  // FLV codec header bytes before the sample or the configuration
};

// `type` is the FLV tag type (8, 9 or 18), `head` the first bytes of its body (audio and video:
// the first kFlvTagHeadBytes are read, more are ignored), `body_size` the whole body's size: a
// frame with no byte after its prefix is NoMedia, a body shorter than its header Unusable.
// Never fails: what cannot be recognised is a plain, non-key frame.
FlvTagHead read_flv_tag_head(uint8_t type, std::span<const uint8_t> head, uint32_t body_size);

// The MP4 description of an MP3 track, from the head of its first frame: the MPEG audio frame
// header after the prefix, else (no valid header there) the legacy FLV rate and channel bits.
struct Mp3Setup {
  uint8_t object_type = 0x6B;  // esds objectTypeIndication: 0x6B MPEG-1 audio, 0x69 MPEG-2 (and 2.5)
  uint32_t sample_rate = 44100;
  uint8_t channels = 2;
};
Mp3Setup mp3_setup(std::span<const uint8_t> head, const FlvTagHead& h);

// The name of the tag's codec for a message: "VP6", "Speex", ... ("unknown" when none).
std::string_view flv_tag_codec_name(uint8_t type, const FlvTagHead& h);

}  // namespace sluice::media
