#include "media/codec/config_record.hpp"

#include "base/byte_io.hpp"
#include "media/codec/avc.hpp"
#include "media/codec/hevc.hpp"

namespace sluice::media {

namespace {

constexpr uint8_t kHevcVps = 32, kHevcSps = 33, kHevcPps = 34;

bool high_profile(uint8_t profile_idc) {
  return profile_idc == 100 || profile_idc == 110 || profile_idc == 122 || profile_idc == 144;
}

// Every parameter set fits the record's 16-bit lengths.
bool fits(const NalList& list) {
  for (auto nal : list) {
    if (nal.empty() || nal.size() > 0xFFFF) return false;
  }
  return true;
}

void length_prefixed(ByteWriter& w, std::span<const uint8_t> nal) {
  w.u16be(static_cast<uint16_t>(nal.size()));
  w.bytes(nal);
}

}  // namespace

std::optional<std::vector<uint8_t>> avc_decoder_config(const NalList& sps, const NalList& pps) {
  if (sps.empty() || pps.empty() || sps.size() > 31 || pps.size() > 255 || sps[0].size() < 4 || !fits(sps) ||
      !fits(pps))
    return std::nullopt;
  std::vector<uint8_t> out;
  ByteWriter w(out);
  w.u8(1);          // configurationVersion
  w.u8(sps[0][1]);  // AVCProfileIndication
  w.u8(sps[0][2]);  // profile_compatibility
  w.u8(sps[0][3]);  // AVCLevelIndication
  w.u8(0xFC | 3);   // lengthSizeMinusOne
  w.u8(static_cast<uint8_t>(0xE0 | sps.size()));
  for (auto s : sps) length_prefixed(w, s);
  w.u8(static_cast<uint8_t>(pps.size()));
  for (auto p : pps) length_prefixed(w, p);
  if (high_profile(sps[0][1])) {
    auto parsed = parse_avc_sps(sps[0]);
    const uint32_t chroma = parsed ? parsed->chroma_format_idc : 1;
    const uint32_t depth = parsed ? parsed->bit_depth_luma : 8;
    w.u8(static_cast<uint8_t>(0xFC | (chroma & 3)));
    w.u8(static_cast<uint8_t>(0xF8 | ((depth - 8) & 7)));
    w.u8(static_cast<uint8_t>(0xF8 | ((depth - 8) & 7)));
    w.u8(0);  // numOfSequenceParameterSetExt
  }
  return out;
}

std::optional<std::vector<uint8_t>> hevc_decoder_config(const NalList& vps, const NalList& sps, const NalList& pps) {
  if (vps.empty() || sps.empty() || pps.empty() || !fits(vps) || !fits(sps) || !fits(pps)) return std::nullopt;
  auto parsed = parse_hevc_sps(sps[0]);
  if (!parsed) return std::nullopt;
  const HevcSps& s = *parsed;
  std::vector<uint8_t> out;
  ByteWriter w(out);
  w.u8(1);  // configurationVersion
  w.u8(static_cast<uint8_t>(s.profile_space << 6 | (s.tier ? 0x20 : 0) | (s.profile_idc & 0x1F)));
  w.u32be(s.compatibility_flags);
  w.u16be(static_cast<uint16_t>(s.constraint_flags >> 32));
  w.u32be(static_cast<uint32_t>(s.constraint_flags));
  w.u8(s.level_idc);
  w.u16be(0xF000);  // min_spatial_segmentation_idc 0
  w.u8(0xFC);       // parallelismType 0: unknown
  w.u8(static_cast<uint8_t>(0xFC | (s.chroma_format_idc & 3)));
  w.u8(static_cast<uint8_t>(0xF8 | ((s.bit_depth_luma - 8) & 7)));
  w.u8(static_cast<uint8_t>(0xF8 | ((s.bit_depth_chroma - 8) & 7)));
  w.u16be(0);  // avgFrameRate: unspecified
  // constantFrameRate 0, numTemporalLayers, temporalIdNested, lengthSizeMinusOne 3
  w.u8(static_cast<uint8_t>((s.max_sub_layers & 7) << 3 | (s.temporal_id_nesting ? 4 : 0) | 3));
  w.u8(3);  // numOfArrays
  for (auto [type, list] : {std::pair{kHevcVps, &vps}, std::pair{kHevcSps, &sps}, std::pair{kHevcPps, &pps}}) {
    w.u8(static_cast<uint8_t>(0x80 | type));  // array_completeness: every one of its type is here
    w.u16be(static_cast<uint16_t>(list->size()));
    for (auto nal : *list) length_prefixed(w, nal);
  }
  return out;
}

}  // namespace sluice::media
