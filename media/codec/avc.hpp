// H.264 / AVC: AVCDecoderConfigurationRecord (ISO 14496-15 5.3.3.1) and the sequence parameter
// set fields needed for stats (ITU-T H.264 7.3.2.1.1): profile, level, picture size.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "base/result.hpp"

namespace sluice::media {

struct AvcSps {
  uint8_t profile_idc = 0;
  uint8_t constraint_flags = 0;
  uint8_t level_idc = 0;  // 31 = level 3.1
  uint32_t chroma_format_idc = 1;
  uint32_t bit_depth_luma = 8;
  uint32_t width = 0;  // after frame cropping
  uint32_t height = 0;
};

struct AvcConfig {
  uint8_t profile = 0;  // AVCProfileIndication
  uint8_t profile_compatibility = 0;
  uint8_t level = 0;             // AVCLevelIndication
  uint8_t nalu_length_size = 4;  // bytes of each NAL unit length prefix in coded frames
  uint8_t sps_count = 0;
  uint8_t pps_count = 0;
  // From the first SPS; 0 when there is none or it cannot be parsed (the record is still usable
  // for relaying, so a strange SPS is not an error here).
  uint32_t width = 0;
  uint32_t height = 0;
};

// `nal` is one SPS NAL unit including its one-byte header, without a start code or length.
Result<AvcSps> parse_avc_sps(std::span<const uint8_t> nal);
Result<AvcConfig> parse_avc_config(std::span<const uint8_t> record);

std::string_view avc_profile_name(uint8_t profile_idc);  // "Baseline", "Main", "High", ...

}  // namespace sluice::media
