// H.265 / HEVC: HEVCDecoderConfigurationRecord (ISO 14496-15 8.3.3.1) and the SPS fields
// needed for stats (ITU-T H.265 7.3.2.2): profile, tier, level, picture size.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "base/result.hpp"

namespace sluice::media {

struct HevcSps {
  uint8_t profile_space = 0;
  bool tier = false;                 // false = Main tier, true = High tier
  uint8_t profile_idc = 0;           // 1 Main, 2 Main10, 3 MainStillPicture, 4 RExt
  uint8_t level_idc = 0;             // 30 x level: 120 = level 4
  uint32_t compatibility_flags = 0;  // general_profile_compatibility_flag[0..31], flag 0 first
  uint64_t constraint_flags = 0;     // the 48 bits after them (progressive_source_flag first)
  uint8_t max_sub_layers = 1;        // sps_max_sub_layers_minus1 + 1
  bool temporal_id_nesting = false;
  uint32_t chroma_format_idc = 1;
  uint32_t width = 0;  // after the conformance window
  uint32_t height = 0;
  uint8_t bit_depth_luma = 8;
  uint8_t bit_depth_chroma = 8;
};

struct HevcConfig {
  uint8_t profile_space = 0;
  bool tier = false;
  uint8_t profile_idc = 0;
  uint32_t profile_compatibility = 0;
  uint8_t level_idc = 0;
  uint8_t chroma_format = 0;
  uint8_t bit_depth_luma = 8;
  uint8_t bit_depth_chroma = 8;
  uint8_t nalu_length_size = 4;
  uint8_t array_count = 0;
  // From the first SPS; 0 when there is none or it cannot be parsed.
  uint32_t width = 0;
  uint32_t height = 0;
};

// `nal` is one SPS NAL unit including its two-byte header.
Result<HevcSps> parse_hevc_sps(std::span<const uint8_t> nal);
Result<HevcConfig> parse_hevc_config(std::span<const uint8_t> record);

std::string_view hevc_profile_name(uint8_t profile_idc);  // "Main", "Main10", ...

}  // namespace sluice::media
