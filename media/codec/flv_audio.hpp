// FLV / RTMP audio tag header: legacy (SoundFormat | rate | size | type, AACPacketType) and the
// Enhanced RTMP v2 ExAudioTagHeader with ModEx and multitrack (docs/protocol.md, "Legacy audio and
// video tag headers", "ExAudioTagHeader", "Multitrack", "ModEx").
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "media/codec/enhanced.hpp"
#include "base/result.hpp"

namespace sluice::media {

enum class AudioCodec : uint8_t {
  Unknown,
  PcmPlatform,
  Adpcm,
  Mp3,
  PcmLe,
  Nellymoser16k,
  Nellymoser8k,
  Nellymoser,
  G711ALaw,
  G711MuLaw,
  Aac,
  Speex,
  Mp3_8k,
  DeviceSpecific,
  Opus,
  Flac,
  Ac3,
  Eac3,
};

// Enhanced packet types; legacy AAC AACPacketType 0/1 map onto the first two.
enum class AudioPacketType : uint8_t {
  SequenceStart = 0,
  CodedFrames = 1,
  SequenceEnd = 2,
  MultichannelConfig = 4,
  Multitrack = 5,
  ModEx = 7,
};

inline constexpr uint8_t kSoundFormatAac = 10;
inline constexpr uint8_t kSoundFormatExHeader = 9;
inline constexpr uint8_t kSoundFormatOpusLegacy = 13;  // unofficial, same ecosystem as HEVC id 12

struct AudioTagHeader {
  bool enhanced = false;
  uint8_t sound_format = 0;  // legacy SoundFormat nibble (9 when enhanced)
  // Legacy header fields. For AAC they are fixed (44 kHz, stereo) and carry no information:
  // the AudioSpecificConfig is authoritative.
  uint32_t legacy_rate_hz = 0;  // 5512, 11025, 22050, 44100
  uint8_t legacy_bits = 0;      // 8 or 16
  uint8_t legacy_channels = 0;  // 1 or 2
  AudioPacketType packet_type = AudioPacketType::CodedFrames;
  bool multitrack = false;
  AvMultitrackType multitrack_type = AvMultitrackType::OneTrack;
  uint32_t timestamp_offset_nanos = 0;
  TrackList tracks;

  bool is_sequence_header() const { return packet_type == AudioPacketType::SequenceStart; }
  AudioCodec codec() const;
};

Result<AudioTagHeader> parse_audio_tag(std::span<const uint8_t> body);

AudioCodec audio_codec_from_fourcc(uint32_t code);
AudioCodec audio_codec_from_sound_format(uint8_t sound_format);
std::string_view audio_codec_name(AudioCodec codec);  // "AAC", "MP3", "Opus", ...

}  // namespace sluice::media
