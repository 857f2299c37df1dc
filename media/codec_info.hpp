// CodecInfo: what a live stream carries, for logs, stats and the API. Learned from the default
// track's sequence headers (and legacy tag header bytes for codecs that have no configuration).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "media/frame.hpp"

namespace sluice::media {

struct CodecInfo {
  // Names point at static strings; empty until that media type is seen.
  std::string_view video_codec;    // "H264", "HEVC", "AV1", ...
  std::string_view video_profile;  // "High", "Main", ...
  uint8_t video_level = 0;         // level_idc as coded: H.264 31 = 3.1, HEVC 120 = 4 (30 x level)
  uint32_t width = 0;
  uint32_t height = 0;
  std::string_view audio_codec;    // "AAC", "MP3", "Opus", ...
  std::string_view audio_profile;  // "AAC-LC", "HE-AAC", ...
  uint32_t sample_rate = 0;
  uint8_t channels = 0;

  bool has_video() const { return !video_codec.empty(); }
  bool has_audio() const { return !audio_codec.empty(); }

  // Learns from one published frame; cheap for frames that teach nothing new.
  void update(const Frame& f);
  void reset() { *this = CodecInfo{}; }

  // "video=H264 High@3.1 1280x720 audio=AAC-LC 44100Hz 2ch"
  std::string summary() const;
};

}  // namespace sluice::media
