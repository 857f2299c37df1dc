// AAC: the AudioSpecificConfig (ISO 14496-3 1.6.2.1) carried by AAC sequence headers.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "base/result.hpp"

namespace sluice::media {

struct AacConfig {
  uint8_t object_type = 0;     // 1 Main, 2 LC, 5 SBR (HE-AAC), 29 PS (HE-AACv2), ...
  uint8_t sampling_index = 0;  // 15 = explicit frequency
  uint32_t sample_rate = 0;    // output rate: the SBR extension rate for explicit HE-AAC
  uint8_t channel_config = 0;  // 0 = defined in a program config element
  uint8_t channels = 0;        // 0 when channel_config is 0 or reserved
  // The AAC core under explicit SBR/PS signalling (object type 5 or 29): its object type and
  // rate, which ADTS carries (media/ts/adts.hpp). For other object types, the same as above
  // (core_sample_rate is then the coded rate). A core type that does not parse is taken as LC,
  // which HE-AAC streams have in practice.
  uint8_t core_object_type = 0;
  uint32_t core_sample_rate = 0;
};

Result<AacConfig> parse_aac_config(std::span<const uint8_t> asc);

std::string_view aac_object_type_name(uint8_t object_type);  // "AAC-LC", "HE-AAC", ...

}  // namespace sluice::media
