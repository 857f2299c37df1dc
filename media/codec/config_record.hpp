// Decoder configuration records built from parameter sets, for sources that carry the parameter
// sets in band (MPEG-TS over SRT, RTP): the AVCDecoderConfigurationRecord (ISO 14496-15 5.3.3.1)
// and the HEVCDecoderConfigurationRecord (8.3.3.1) that an FLV sequence header carries. Both say
// NAL unit lengths of 4 bytes. Each parameter set is one NAL unit with its header, without a
// start code or length.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace sluice::media {

using NalList = std::vector<std::span<const uint8_t>>;

// Nothing when there is no SPS or PPS, or the first SPS is shorter than its fixed header. The
// profile, compatibility and level come from the first SPS; High profiles get the chroma format
// and bit depth fields the record has for them.
std::optional<std::vector<uint8_t>> avc_decoder_config(const NalList& sps, const NalList& pps);

// Nothing when a VPS, SPS or PPS is missing or the first SPS does not parse (its profile, tier,
// level, chroma format and bit depths go into the record's header).
std::optional<std::vector<uint8_t>> hevc_decoder_config(const NalList& vps, const NalList& sps, const NalList& pps);

}  // namespace sluice::media
