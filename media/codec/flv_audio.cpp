#include "media/codec/flv_audio.hpp"

#include "media/codec/fourcc.hpp"

namespace sluice::media {

AudioCodec audio_codec_from_fourcc(uint32_t code) {
  switch (code) {
    case fourcc::kMp4a: return AudioCodec::Aac;
    case fourcc::kOpus: return AudioCodec::Opus;
    case fourcc::kFlac: return AudioCodec::Flac;
    case fourcc::kAc3: return AudioCodec::Ac3;
    case fourcc::kEac3: return AudioCodec::Eac3;
    case fourcc::kMp3: return AudioCodec::Mp3;
    default: return AudioCodec::Unknown;
  }
}

AudioCodec audio_codec_from_sound_format(uint8_t sound_format) {
  switch (sound_format) {
    case 0: return AudioCodec::PcmPlatform;
    case 1: return AudioCodec::Adpcm;
    case 2: return AudioCodec::Mp3;
    case 3: return AudioCodec::PcmLe;
    case 4: return AudioCodec::Nellymoser16k;
    case 5: return AudioCodec::Nellymoser8k;
    case 6: return AudioCodec::Nellymoser;
    case 7: return AudioCodec::G711ALaw;
    case 8: return AudioCodec::G711MuLaw;
    case kSoundFormatAac: return AudioCodec::Aac;
    case 11: return AudioCodec::Speex;
    case kSoundFormatOpusLegacy: return AudioCodec::Opus;
    case 14: return AudioCodec::Mp3_8k;
    case 15: return AudioCodec::DeviceSpecific;
    default: return AudioCodec::Unknown;
  }
}

std::string_view audio_codec_name(AudioCodec codec) {
  switch (codec) {
    case AudioCodec::Unknown: return "unknown";
    case AudioCodec::PcmPlatform: return "PCM";
    case AudioCodec::Adpcm: return "ADPCM";
    case AudioCodec::Mp3: return "MP3";
    case AudioCodec::PcmLe: return "PCM-LE";
    case AudioCodec::Nellymoser16k: return "Nellymoser-16k";
    case AudioCodec::Nellymoser8k: return "Nellymoser-8k";
    case AudioCodec::Nellymoser: return "Nellymoser";
    case AudioCodec::G711ALaw: return "G711A";
    case AudioCodec::G711MuLaw: return "G711U";
    case AudioCodec::Aac: return "AAC";
    case AudioCodec::Speex: return "Speex";
    case AudioCodec::Mp3_8k: return "MP3-8k";
    case AudioCodec::DeviceSpecific: return "device-specific";
    case AudioCodec::Opus: return "Opus";
    case AudioCodec::Flac: return "FLAC";
    case AudioCodec::Ac3: return "AC3";
    case AudioCodec::Eac3: return "EAC3";
  }
  return "unknown";
}

AudioCodec AudioTagHeader::codec() const {
  if (!enhanced) return audio_codec_from_sound_format(sound_format);
  const TrackData* t = tracks.first();
  return t ? audio_codec_from_fourcc(t->fourcc) : AudioCodec::Unknown;
}

namespace {

constexpr uint32_t kLegacyRates[4] = {5512, 11025, 22050, 44100};

Result<AudioTagHeader> parse_legacy(ByteReader& r, uint8_t b0) {
  AudioTagHeader h;
  h.sound_format = b0 >> 4;
  h.legacy_rate_hz = kLegacyRates[(b0 >> 2) & 0x03];
  h.legacy_bits = (b0 & 0x02) ? 16 : 8;
  h.legacy_channels = (b0 & 0x01) ? 2 : 1;
  TrackData t;
  if (h.sound_format == kSoundFormatAac) {
    const uint8_t aac_packet_type = r.u8();
    if (r.failed()) return Error(Errc::Truncated, "AACPacketType");
    if (aac_packet_type > 1) return Error(Errc::Malformed, "AACPacketType " + std::to_string(aac_packet_type));
    h.packet_type = static_cast<AudioPacketType>(aac_packet_type);
    t.fourcc = fourcc::kMp4a;
  }
  t.data_offset = r.position();
  t.data_size = r.remaining();
  h.tracks.add(t);
  return h;
}

bool is_known_packet_type(uint8_t type) {
  return type <= 2 || type == static_cast<uint8_t>(AudioPacketType::MultichannelConfig);
}

Result<void> parse_ex_header(ByteReader& r, uint8_t b0, AudioTagHeader& h, TrackLayout& layout) {
  h.enhanced = true;
  h.sound_format = kSoundFormatExHeader;
  uint8_t type = b0 & 0x0F;
  while (type == static_cast<uint8_t>(AudioPacketType::ModEx)) {
    auto next = read_modex(r, h.timestamp_offset_nanos);
    if (!next) return std::move(next).error();
    type = *next;
  }
  if (type == static_cast<uint8_t>(AudioPacketType::Multitrack)) {
    const uint8_t b = r.u8();
    h.multitrack = true;
    layout.multitrack = true;
    layout.type = static_cast<AvMultitrackType>(b >> 4);
    h.multitrack_type = layout.type;
    type = b & 0x0F;
    if (b >> 4 > 2) return Error(Errc::Unsupported, "AvMultitrackType " + std::to_string(b >> 4));
    if (layout.type != AvMultitrackType::ManyTracksManyCodecs) layout.fourcc = r.u32be();
  } else {
    layout.fourcc = r.u32be();
  }
  if (r.failed()) return Error(Errc::Truncated, "ExAudioTagHeader");
  if (!is_known_packet_type(type)) return Error(Errc::Unsupported, "AudioPacketType " + std::to_string(type));
  h.packet_type = static_cast<AudioPacketType>(type);
  return {};
}

Result<AudioTagHeader> parse_enhanced(ByteReader& r, uint8_t b0) {
  AudioTagHeader h;
  TrackLayout layout;
  auto ok = parse_ex_header(r, b0, h, layout);
  if (!ok) return std::move(ok).error();
  ok = read_tracks(r, layout, h.tracks);
  if (!ok) return std::move(ok).error();
  return h;
}

}  // namespace

Result<AudioTagHeader> parse_audio_tag(std::span<const uint8_t> body) {
  ByteReader r(body);
  const uint8_t b0 = r.u8();
  // An empty audio message is the legacy "silence" marker, not a header to parse.
  if (r.failed()) return Error(Errc::Truncated, "empty audio tag");
  auto h = (b0 >> 4) == kSoundFormatExHeader ? parse_enhanced(r, b0) : parse_legacy(r, b0);
  if (!h) return std::move(h).error().wrap("audio tag");
  return h;
}

}  // namespace sluice::media
