// For unit tests that hand ffmpeg what the server's VOD sends (tests/unit/media/vod/ffmpeg_test.cpp,
// tests/unit/media/record/mp4_ffprobe_test.cpp): a file's index written as the FLV a player
// receives (Enhanced RTMP HEVC for HEVC).
#pragma once

#include <doctest/doctest.h>

#include <cstdint>
#include <span>
#include <vector>

#include "media/flv/flv.hpp"
#include "media/vod/media_index.hpp"
#include "media/vod/tag_body.hpp"

namespace sluice::test {

inline std::vector<uint8_t> index_to_flv(const std::vector<uint8_t>& file, const media::vod::MediaIndex& index) {
  using namespace sluice::media;
  using namespace sluice::media::vod;
  std::vector<uint8_t> out;
  write_flv_header(index.has_audio, index.has_video, out);
  append_tag(kSampleScript, 0, index.metadata, out);
  if (!index.video_sequence_header.empty()) append_tag(kSampleVideo, 0, index.video_sequence_header, out);
  if (!index.audio_sequence_header.empty()) append_tag(kSampleAudio, 0, index.audio_sequence_header, out);
  for (const Sample& s : index.samples) {
    std::vector<uint8_t> body;
    REQUIRE(sample_to_tag_body(index, s, std::span(file).subspan(s.file_offset, s.size), body).ok());
    append_tag(s.type, s.dts_ms, body, out);
  }
  return out;
}

}  // namespace sluice::test
