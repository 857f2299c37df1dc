#include "media/vod/flv_tag_class.hpp"

#include <algorithm>

#include "media/codec/fourcc.hpp"
#include "media/script_data.hpp"
#include "media/sample.hpp"
#include "base/byte_io.hpp"

namespace sluice::media::vod {


namespace {

constexpr uint8_t kFrameKey = 1;
constexpr uint8_t kFrameCommand = 5;
constexpr uint8_t kPacketSequenceStart = 0;
constexpr uint8_t kPacketCodedFrames = 1;
constexpr uint8_t kPacketSequenceEnd = 2;
constexpr uint8_t kPacketMetadata = 4;
constexpr uint8_t kPacketMpeg2TsSequenceStart = 5;
constexpr uint8_t kVideoPacketMultitrack = 6;
constexpr uint8_t kAudioPacketMultitrack = 5;
constexpr uint8_t kManyTracksManyCodecs = 2;

bool has_nalu_cts(uint32_t code) { return code == fourcc::kAvc1 || code == fourcc::kHvc1 || code == fourcc::kVvc1; }

void classify_enhanced_video(ByteReader& r, uint8_t b0, FlvTagClass& c) {
  const uint8_t frame = (b0 >> 4) & 0x07;
  uint8_t packet = b0 & 0x0F;
  if (frame == kFrameCommand && packet != kPacketMetadata) return;  // a command has no frame
  bool multitrack = false;
  if (packet == kVideoPacketMultitrack) {
    const uint8_t b1 = r.u8();
    multitrack = true;
    packet = b1 & 0x0F;
    if ((b1 >> 4) == kManyTracksManyCodecs) {
      r.skip(1);  // trackId; the first track's FourCC follows it
    }
  }
  const uint32_t code = r.u32be();
  if (!r.failed()) c.video_codec = video_codec_from_fourcc(code);
  // ModEx (7) hides the real packet type behind modifier data: count it as a frame, keyed by
  // its frame type, which is what matters for seeking.
  c.sequence_header = packet == kPacketSequenceStart || packet == kPacketMpeg2TsSequenceStart;
  c.keyframe = frame == kFrameKey && !c.sequence_header && packet != kPacketMetadata && packet != kPacketSequenceEnd;
  if (!multitrack && packet == kPacketCodedFrames && has_nalu_cts(code)) {
    const int32_t cts = r.s24be();
    if (!r.failed()) c.cts_ms = cts;
  }
}

void classify_video(ByteReader& r, FlvTagClass& c) {
  const uint8_t b0 = r.u8();
  if (r.failed()) return;
  if (b0 & 0x80) return classify_enhanced_video(r, b0, c);
  const uint8_t frame = b0 >> 4;
  const uint8_t codec = b0 & 0x0F;
  if (frame == kFrameCommand) return;
  c.video_codec = video_codec_from_legacy_id(codec);
  if (codec != kLegacyVideoCodecAvc && codec != kLegacyVideoCodecHevc) {
    c.keyframe = frame == kFrameKey;  // H.263, VP6...: no packet types
    return;
  }
  const uint8_t packet = r.u8();
  if (r.failed()) return;
  c.sequence_header = packet == kPacketSequenceStart;
  c.keyframe = frame == kFrameKey && packet == kPacketCodedFrames;
  if (packet == kPacketCodedFrames) {
    const int32_t cts = r.s24be();
    if (!r.failed()) c.cts_ms = cts;
  }
}

void classify_audio(ByteReader& r, FlvTagClass& c) {
  const uint8_t b0 = r.u8();
  if (r.failed()) return;
  const uint8_t format = b0 >> 4;
  if (format != kSoundFormatExHeader) {
    c.audio_codec = audio_codec_from_sound_format(format);
    if (format == kSoundFormatAac) c.sequence_header = r.u8() == kPacketSequenceStart && !r.failed();
    return;
  }
  uint8_t packet = b0 & 0x0F;
  if (packet == kAudioPacketMultitrack) {
    const uint8_t b1 = r.u8();
    packet = b1 & 0x0F;
    if ((b1 >> 4) == kManyTracksManyCodecs) r.skip(1);
  }
  const uint32_t code = r.u32be();
  if (!r.failed()) c.audio_codec = audio_codec_from_fourcc(code);
  c.sequence_header = packet == kPacketSequenceStart;
}

}  // namespace

FlvTagClass classify_flv_tag(uint8_t type, std::span<const uint8_t> head) {
  FlvTagClass c;
  ByteReader r(head.first(std::min(head.size(), kFlvClassifyBytes)));
  switch (type) {
    case kSampleVideo: classify_video(r, c); break;
    case kSampleAudio: classify_audio(r, c); break;
    case kSampleScript: c.on_metadata = is_on_metadata(head); break;
    default: break;
  }
  return c;
}

}  // namespace sluice::media::vod
