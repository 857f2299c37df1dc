#include "media/flv/flv_tag_head.hpp"

#include <algorithm>

#include "media/codec/fourcc.hpp"
#include "media/sample.hpp"
#include "media/script_data.hpp"
#include "base/byte_io.hpp"

namespace sluice::media {

namespace {

constexpr uint8_t kFrameKey = 1;
constexpr uint8_t kFrameCommand = 5;
constexpr uint8_t kExHeaderBit = 0x80;
constexpr uint8_t kManyTracksManyCodecs = 2;
constexpr uint8_t kSoundFormatMp3 = 2;
constexpr uint8_t kSoundFormatMp3_8k = 14;

// Legacy AVCPacketType / AACPacketType.
constexpr uint8_t kLegacySequenceHeader = 0;
constexpr uint8_t kLegacyFrames = 1;
constexpr uint8_t kLegacyEndOfSequence = 2;

// FLV codec header sizes (the prefix).
constexpr uint8_t kLegacyHeader = 5;     // byte0, packet type, SI24 CTS
constexpr uint8_t kAacHeader = 2;        // byte0, packet type
constexpr uint8_t kMp3Header = 1;        // byte0
constexpr uint8_t kFourCcHeader = 5;     // byte0, FourCC
constexpr uint8_t kFourCcCtsHeader = 8;  // byte0, FourCC, SI24 CTS

bool has_nalu_cts(uint32_t code) { return code == fourcc::kAvc1 || code == fourcc::kHvc1 || code == fourcc::kVvc1; }

void set_payload(FlvTagHead& h, FlvPacketKind kind, Mp4Codec codec, uint8_t prefix) {
  h.kind = kind;
  h.codec = codec;
  h.prefix = prefix;
}

// A body too short for its header cannot be copied; a frame with nothing after it has no sample.
void fit_to_body(FlvTagHead& h, uint32_t body_size) {
  if (h.kind != FlvPacketKind::Frame && h.kind != FlvPacketKind::Config) return;
  if (body_size < h.prefix || (h.kind == FlvPacketKind::Config && body_size == h.prefix)) {
    h.kind = FlvPacketKind::Unusable;
  } else if (body_size == h.prefix) {
    h.kind = FlvPacketKind::NoMedia;  // ffmpeg's AVC end-of-stream tags, empty frames
  }
}

void enhanced_video_payload(FlvTagHead& h, VideoPacketType packet, uint32_t code) {
  const Mp4Codec codec = code == fourcc::kAvc1   ? Mp4Codec::Avc
                         : code == fourcc::kHvc1 ? Mp4Codec::Hevc
                                                 : Mp4Codec::None;
  switch (packet) {
    case VideoPacketType::SequenceStart: set_payload(h, FlvPacketKind::Config, codec, kFourCcHeader); break;
    case VideoPacketType::CodedFrames:
      set_payload(h, FlvPacketKind::Frame, codec, has_nalu_cts(code) ? kFourCcCtsHeader : kFourCcHeader);
      break;
    case VideoPacketType::CodedFramesX: set_payload(h, FlvPacketKind::Frame, codec, kFourCcHeader); break;
    case VideoPacketType::SequenceEnd:
    case VideoPacketType::Metadata: set_payload(h, FlvPacketKind::NoMedia, codec, kFourCcHeader); break;
    // AV1's MPEG-2 TS configuration: a configuration of a codec MP4 copy does not take.
    case VideoPacketType::Mpeg2TsSequenceStart:
      set_payload(h, codec == Mp4Codec::None ? FlvPacketKind::Config : FlvPacketKind::Unusable, codec, kFourCcHeader);
      break;
    default: break;
  }
}

void enhanced_video(ByteReader& r, uint8_t b0, FlvTagHead& h) {
  const uint8_t frame = (b0 >> 4) & 0x07;
  const auto outer = static_cast<VideoPacketType>(b0 & 0x0F);
  const bool unusable = outer == VideoPacketType::Multitrack || outer == VideoPacketType::ModEx;
  if (frame == kFrameCommand && outer != VideoPacketType::Metadata) {  // a command has no frame
    if (!unusable) set_payload(h, FlvPacketKind::NoMedia, Mp4Codec::None, 1);
    return;
  }
  auto packet = outer;
  const bool multitrack = outer == VideoPacketType::Multitrack;
  if (multitrack) {
    const uint8_t b1 = r.u8();
    packet = static_cast<VideoPacketType>(b1 & 0x0F);
    if ((b1 >> 4) == kManyTracksManyCodecs) r.skip(1);  // trackId; the first track's FourCC follows it
  }
  const uint32_t code = r.u32be();
  const bool have_code = !r.failed();
  if (have_code) h.video_codec = video_codec_from_fourcc(code);
  // ModEx (7) hides the real packet type behind modifier data: count it as a frame, keyed by
  // its frame type, which is what matters for seeking.
  h.sequence_header = packet == VideoPacketType::SequenceStart || packet == VideoPacketType::Mpeg2TsSequenceStart;
  h.keyframe = frame == kFrameKey && !h.sequence_header && packet != VideoPacketType::Metadata &&
               packet != VideoPacketType::SequenceEnd;
  if (!multitrack && packet == VideoPacketType::CodedFrames && has_nalu_cts(code)) {
    const int32_t cts = r.s24be();
    if (!r.failed()) h.cts_ms = cts;
  }
  if (!unusable && have_code) enhanced_video_payload(h, outer, code);
}

void video(ByteReader& r, FlvTagHead& h) {
  const uint8_t b0 = r.u8();
  if (r.failed()) return;
  if (b0 & kExHeaderBit) return enhanced_video(r, b0, h);
  const uint8_t frame = b0 >> 4;
  const uint8_t id = b0 & 0x0F;
  if (frame == kFrameCommand) return set_payload(h, FlvPacketKind::NoMedia, Mp4Codec::None, 1);
  h.video_codec = video_codec_from_legacy_id(id);
  if (id != kLegacyVideoCodecAvc && id != kLegacyVideoCodecHevc) {
    h.keyframe = frame == kFrameKey;  // H.263, VP6, screen video: no packet types
    return set_payload(h, FlvPacketKind::Frame, Mp4Codec::None, 1);
  }
  const uint8_t packet = r.u8();
  if (r.failed()) return;
  h.sequence_header = packet == kLegacySequenceHeader;
  h.keyframe = frame == kFrameKey && packet == kLegacyFrames;
  if (packet == kLegacyFrames) {
    const int32_t cts = r.s24be();
    if (!r.failed()) h.cts_ms = cts;
  }
  const Mp4Codec codec = id == kLegacyVideoCodecAvc ? Mp4Codec::Avc : Mp4Codec::Hevc;
  if (packet == kLegacySequenceHeader) set_payload(h, FlvPacketKind::Config, codec, kLegacyHeader);
  if (packet == kLegacyFrames) set_payload(h, FlvPacketKind::Frame, codec, kLegacyHeader);
  if (packet == kLegacyEndOfSequence) set_payload(h, FlvPacketKind::NoMedia, codec, kLegacyHeader);
}

void enhanced_audio_payload(FlvTagHead& h, AudioPacketType packet, uint32_t code) {
  const Mp4Codec codec = code == fourcc::kMp4a ? Mp4Codec::Aac : code == fourcc::kMp3 ? Mp4Codec::Mp3 : Mp4Codec::None;
  switch (packet) {
    case AudioPacketType::SequenceStart:
      // MP3 has no configuration: nothing to keep.
      set_payload(h, codec == Mp4Codec::Mp3 ? FlvPacketKind::NoMedia : FlvPacketKind::Config, codec, kFourCcHeader);
      break;
    case AudioPacketType::CodedFrames: set_payload(h, FlvPacketKind::Frame, codec, kFourCcHeader); break;
    case AudioPacketType::SequenceEnd:
    case AudioPacketType::MultichannelConfig: set_payload(h, FlvPacketKind::NoMedia, codec, kFourCcHeader); break;
    default: break;
  }
}

void enhanced_audio(ByteReader& r, uint8_t b0, FlvTagHead& h) {
  const auto outer = static_cast<AudioPacketType>(b0 & 0x0F);
  auto packet = outer;
  if (outer == AudioPacketType::Multitrack) {
    const uint8_t b1 = r.u8();
    packet = static_cast<AudioPacketType>(b1 & 0x0F);
    if ((b1 >> 4) == kManyTracksManyCodecs) r.skip(1);
  }
  const uint32_t code = r.u32be();
  if (!r.failed()) h.audio_codec = audio_codec_from_fourcc(code);
  h.sequence_header = packet == AudioPacketType::SequenceStart;
  const bool unusable = outer == AudioPacketType::Multitrack || outer == AudioPacketType::ModEx;
  if (!unusable && !r.failed()) enhanced_audio_payload(h, outer, code);
}

void audio(ByteReader& r, FlvTagHead& h) {
  const uint8_t b0 = r.u8();
  if (r.failed()) return;
  const uint8_t format = b0 >> 4;
  if (format == kSoundFormatExHeader) return enhanced_audio(r, b0, h);
  h.audio_codec = audio_codec_from_sound_format(format);
  if (format == kSoundFormatAac) {
    const uint8_t packet = r.u8();
    if (r.failed()) return;
    h.sequence_header = packet == kLegacySequenceHeader;
    if (packet == kLegacySequenceHeader) set_payload(h, FlvPacketKind::Config, Mp4Codec::Aac, kAacHeader);
    if (packet == kLegacyFrames) set_payload(h, FlvPacketKind::Frame, Mp4Codec::Aac, kAacHeader);
  } else if (format == kSoundFormatMp3 || format == kSoundFormatMp3_8k) {
    set_payload(h, FlvPacketKind::Frame, Mp4Codec::Mp3, kMp3Header);
  } else {
    set_payload(h, FlvPacketKind::Frame, Mp4Codec::None, 1);  // Speex, Nellymoser, PCM, G.711, ...
  }
}

// ISO 11172-3 / 13818-3 frame header: sync, version, layer, rate index, channel mode.
bool parse_mp3_header(std::span<const uint8_t> h, Mp3Setup& out) {
  constexpr uint32_t kRates[3] = {44100, 48000, 32000};
  if (h.size() < 4 || h[0] != 0xFF || (h[1] & 0xE0) != 0xE0) return false;
  const uint8_t version = (h[1] >> 3) & 0x03;  // 3 MPEG-1, 2 MPEG-2, 0 MPEG-2.5, 1 reserved
  const uint8_t layer = (h[1] >> 1) & 0x03;    // 0 reserved
  const uint8_t rate = (h[2] >> 2) & 0x03;     // 3 reserved
  if (version == 1 || layer == 0 || rate == 3) return false;
  out.object_type = version == 3 ? 0x6B : 0x69;
  out.sample_rate = kRates[rate] >> (version == 3 ? 0 : version == 2 ? 1 : 2);
  out.channels = (h[3] >> 6) == 3 ? 1 : 2;
  return true;
}

}  // namespace

std::string_view mp4_codec_name(Mp4Codec c) {
  switch (c) {
    case Mp4Codec::Avc: return "H.264";
    case Mp4Codec::Hevc: return "HEVC";
    case Mp4Codec::Aac: return "AAC";
    case Mp4Codec::Mp3: return "MP3";
    case Mp4Codec::None: break;
  }
  return "none";
}

FlvTagHead read_flv_tag_head(uint8_t type, std::span<const uint8_t> head, uint32_t body_size) {
  FlvTagHead h;
  ByteReader r(head.first(std::min(head.size(), kFlvTagHeadBytes)));
  switch (type) {
    case kSampleVideo: video(r, h); break;
    case kSampleAudio: audio(r, h); break;
    case kSampleScript: h.on_metadata = is_on_metadata(head); return h;
    default: return h;
  }
  fit_to_body(h, body_size);
  return h;
}

Mp3Setup mp3_setup(std::span<const uint8_t> head, const FlvTagHead& h) {
  constexpr uint32_t kLegacyRates[4] = {5512, 11025, 22050, 44100};
  Mp3Setup s;
  if (h.prefix <= head.size() && parse_mp3_header(head.subspan(h.prefix), s)) return s;
  if (h.prefix == kMp3Header && !head.empty()) {  // legacy: SoundRate and SoundType bits
    s.sample_rate = (head[0] >> 4) == kSoundFormatMp3_8k ? 8000 : kLegacyRates[(head[0] >> 2) & 0x03];
    s.channels = (head[0] & 0x01) ? 2 : 1;
  }
  return s;
}

std::string_view flv_tag_codec_name(uint8_t type, const FlvTagHead& h) {
  return type == kSampleVideo ? video_codec_name(h.video_codec) : audio_codec_name(h.audio_codec);
}

}  // namespace sluice::media
