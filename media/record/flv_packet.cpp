#include "media/record/flv_packet.hpp"

#include "media/codec/fourcc.hpp"
#include "media/sample.hpp"
#include "base/byte_io.hpp"

namespace sluice::media::record {

namespace {

constexpr uint8_t kFrameCommand = 5;
constexpr uint8_t kExHeaderBit = 0x80;
constexpr uint8_t kSoundFormatMp3 = 2;
constexpr uint8_t kSoundFormatMp3_8k = 14;

// Legacy AVCPacketType / AACPacketType.
constexpr uint8_t kLegacySequenceHeader = 0;
constexpr uint8_t kLegacyFrames = 1;
constexpr uint8_t kLegacyEndOfSequence = 2;

constexpr uint8_t kLegacyHeader = 5;     // byte0, packet type, SI24 CTS
constexpr uint8_t kAacHeader = 2;        // byte0, packet type
constexpr uint8_t kMp3Header = 1;        // byte0
constexpr uint8_t kFourCcHeader = 5;     // byte0, FourCC
constexpr uint8_t kFourCcCtsHeader = 8;  // byte0, FourCC, SI24 CTS

FlvPacket make(FlvPacketKind kind, Mp4Codec codec, uint8_t prefix) {
  FlvPacket p;
  p.kind = kind;
  p.codec = codec;
  p.prefix = prefix;
  return p;
}

// A body too short for its header cannot be copied; a frame with nothing after it has no sample.
FlvPacket fit_to_body(FlvPacket p, uint32_t body_size) {
  if (p.kind != FlvPacketKind::Frame && p.kind != FlvPacketKind::Config) return p;
  if (body_size < p.prefix || (p.kind == FlvPacketKind::Config && body_size == p.prefix)) {
    p.kind = FlvPacketKind::Unusable;
  } else if (body_size == p.prefix) {
    p.kind = FlvPacketKind::NoMedia;  // ffmpeg's AVC end-of-stream tags, empty frames
  }
  return p;
}

FlvPacket enhanced_video(std::span<const uint8_t> head) {
  const uint8_t frame = (head[0] >> 4) & 0x07;
  const auto packet = static_cast<VideoPacketType>(head[0] & 0x0F);
  if (packet == VideoPacketType::Multitrack || packet == VideoPacketType::ModEx) return {};
  if (frame == kFrameCommand && packet != VideoPacketType::Metadata) return make(FlvPacketKind::NoMedia, Mp4Codec::None, 1);
  if (head.size() < kFourCcHeader) return {};
  const uint32_t code = load_u32be(head.data() + 1);
  const Mp4Codec codec = code == fourcc::kAvc1 ? Mp4Codec::Avc : code == fourcc::kHvc1 ? Mp4Codec::Hevc : Mp4Codec::None;
  const bool nalu_cts = code == fourcc::kAvc1 || code == fourcc::kHvc1 || code == fourcc::kVvc1;
  FlvPacket p;
  switch (packet) {
    case VideoPacketType::SequenceStart: p = make(FlvPacketKind::Config, codec, kFourCcHeader); break;
    case VideoPacketType::CodedFrames:
      p = make(FlvPacketKind::Frame, codec, nalu_cts ? kFourCcCtsHeader : kFourCcHeader);
      break;
    case VideoPacketType::CodedFramesX: p = make(FlvPacketKind::Frame, codec, kFourCcHeader); break;
    case VideoPacketType::SequenceEnd:
    case VideoPacketType::Metadata: p = make(FlvPacketKind::NoMedia, codec, kFourCcHeader); break;
    // AV1's MPEG-2 TS configuration: a configuration of a codec MP4 copy does not take.
    case VideoPacketType::Mpeg2TsSequenceStart:
      p = make(codec == Mp4Codec::None ? FlvPacketKind::Config : FlvPacketKind::Unusable, codec, kFourCcHeader);
      break;
    default: break;
  }
  p.video_codec = video_codec_from_fourcc(code);
  return p;
}

FlvPacket video(std::span<const uint8_t> head) {
  if (head[0] & kExHeaderBit) return enhanced_video(head);
  const uint8_t frame = head[0] >> 4;
  const uint8_t id = head[0] & 0x0F;
  FlvPacket p;
  if (frame == kFrameCommand) {
    p = make(FlvPacketKind::NoMedia, Mp4Codec::None, 1);
  } else if (id == kLegacyVideoCodecAvc || id == kLegacyVideoCodecHevc) {
    const Mp4Codec codec = id == kLegacyVideoCodecAvc ? Mp4Codec::Avc : Mp4Codec::Hevc;
    const int packet = head.size() > 1 ? head[1] : -1;
    if (packet == kLegacySequenceHeader) p = make(FlvPacketKind::Config, codec, kLegacyHeader);
    if (packet == kLegacyFrames) p = make(FlvPacketKind::Frame, codec, kLegacyHeader);
    if (packet == kLegacyEndOfSequence) p = make(FlvPacketKind::NoMedia, codec, kLegacyHeader);
  } else {
    p = make(FlvPacketKind::Frame, Mp4Codec::None, 1);  // H.263, VP6, screen video
  }
  p.video_codec = video_codec_from_legacy_id(id);
  return p;
}

FlvPacket enhanced_audio(std::span<const uint8_t> head) {
  const auto packet = static_cast<AudioPacketType>(head[0] & 0x0F);
  if (packet == AudioPacketType::Multitrack || packet == AudioPacketType::ModEx || head.size() < kFourCcHeader) return {};
  const uint32_t code = load_u32be(head.data() + 1);
  const Mp4Codec codec = code == fourcc::kMp4a ? Mp4Codec::Aac : code == fourcc::kMp3 ? Mp4Codec::Mp3 : Mp4Codec::None;
  FlvPacket p;
  switch (packet) {
    case AudioPacketType::SequenceStart:
      // MP3 has no configuration: nothing to keep.
      p = make(codec == Mp4Codec::Mp3 ? FlvPacketKind::NoMedia : FlvPacketKind::Config, codec, kFourCcHeader);
      break;
    case AudioPacketType::CodedFrames: p = make(FlvPacketKind::Frame, codec, kFourCcHeader); break;
    case AudioPacketType::SequenceEnd:
    case AudioPacketType::MultichannelConfig: p = make(FlvPacketKind::NoMedia, codec, kFourCcHeader); break;
    default: break;
  }
  p.audio_codec = audio_codec_from_fourcc(code);
  return p;
}

FlvPacket audio(std::span<const uint8_t> head) {
  const uint8_t format = head[0] >> 4;
  if (format == kSoundFormatExHeader) return enhanced_audio(head);
  FlvPacket p;
  if (format == kSoundFormatAac) {
    const int packet = head.size() > 1 ? head[1] : -1;
    if (packet == kLegacySequenceHeader) p = make(FlvPacketKind::Config, Mp4Codec::Aac, kAacHeader);
    if (packet == kLegacyFrames) p = make(FlvPacketKind::Frame, Mp4Codec::Aac, kAacHeader);
  } else if (format == kSoundFormatMp3 || format == kSoundFormatMp3_8k) {
    p = make(FlvPacketKind::Frame, Mp4Codec::Mp3, kMp3Header);
  } else {
    p = make(FlvPacketKind::Frame, Mp4Codec::None, 1);  // Speex, Nellymoser, PCM, G.711, ...
  }
  p.audio_codec = audio_codec_from_sound_format(format);
  return p;
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

FlvPacket classify_flv_packet(uint8_t type, std::span<const uint8_t> head, uint32_t body_size) {
  if (head.empty() || (type != kSampleVideo && type != kSampleAudio)) return {};
  return fit_to_body(type == kSampleVideo ? video(head) : audio(head), body_size);
}

Mp3Setup mp3_setup(std::span<const uint8_t> head, const FlvPacket& p) {
  constexpr uint32_t kLegacyRates[4] = {5512, 11025, 22050, 44100};
  Mp3Setup s;
  if (p.prefix <= head.size() && parse_mp3_header(head.subspan(p.prefix), s)) return s;
  if (p.prefix == kMp3Header && !head.empty()) {  // legacy: SoundRate and SoundType bits
    s.sample_rate = (head[0] >> 4) == kSoundFormatMp3_8k ? 8000 : kLegacyRates[(head[0] >> 2) & 0x03];
    s.channels = (head[0] & 0x01) ? 2 : 1;
  }
  return s;
}

std::string_view flv_packet_codec_name(uint8_t type, const FlvPacket& p) {
  return type == kSampleVideo ? video_codec_name(p.video_codec) : audio_codec_name(p.audio_codec);
}

}  // namespace sluice::media::record
