#include "media/codec/hevc.hpp"

#include "media/codec/bit_reader.hpp"
#include "base/byte_io.hpp"

namespace sluice::media {

namespace {

constexpr uint8_t kNalTypeSps = 33;
constexpr uint64_t kMaxDimension = 16384;
constexpr size_t kConfigFixedSize = 23;

// profile_tier_level(1, max_sub_layers_minus1) (H.265 7.3.3): general fields kept, sub-layer
// fields skipped.
void read_profile_tier_level(BitReader& br, unsigned max_sub_layers_minus1, HevcSps& sps) {
  sps.profile_space = static_cast<uint8_t>(br.bits(2));
  sps.tier = br.flag();
  sps.profile_idc = static_cast<uint8_t>(br.bits(5));
  sps.compatibility_flags = br.bits(32);
  // progressive/interlaced/non-packed/frame-only + 44 constraint bits
  sps.constraint_flags = uint64_t{br.bits(16)} << 32 | br.bits(32);
  sps.level_idc = static_cast<uint8_t>(br.bits(8));
  bool profile_present[8] = {};
  bool level_present[8] = {};
  for (unsigned i = 0; i < max_sub_layers_minus1; ++i) {
    profile_present[i] = br.flag();
    level_present[i] = br.flag();
  }
  if (max_sub_layers_minus1 > 0) br.skip_bits(2 * (8 - max_sub_layers_minus1));  // reserved_zero_2bits
  for (unsigned i = 0; i < max_sub_layers_minus1; ++i) {
    if (profile_present[i]) br.skip_bits(88);
    if (level_present[i]) br.skip_bits(8);
  }
}

// Picture size minus the conformance window, in luma samples (H.265 7.4.3.2.1).
Result<void> read_picture_size(BitReader& br, HevcSps& sps, bool separate_colour_plane) {
  const uint64_t width = br.ue();
  const uint64_t height = br.ue();
  uint64_t left = 0, right = 0, top = 0, bottom = 0;
  if (br.flag()) {  // conformance_window_flag
    left = br.ue();
    right = br.ue();
    top = br.ue();
    bottom = br.ue();
  }
  if (br.failed()) return Error(Errc::Truncated, "SPS picture size");
  const uint32_t chroma = separate_colour_plane ? 0 : sps.chroma_format_idc;
  const uint64_t sub_width = chroma == 1 || chroma == 2 ? 2 : 1;
  const uint64_t sub_height = chroma == 1 ? 2 : 1;
  const uint64_t crop_x = sub_width * (left + right);
  const uint64_t crop_y = sub_height * (top + bottom);
  if (width == 0 || height == 0 || width > kMaxDimension || height > kMaxDimension)
    return Error(Errc::Malformed, "picture size");
  if (crop_x >= width || crop_y >= height) return Error(Errc::Malformed, "conformance window");
  sps.width = static_cast<uint32_t>(width - crop_x);
  sps.height = static_cast<uint32_t>(height - crop_y);
  return {};
}

Result<HevcSps> parse_sps_body(BitReader& br) {
  HevcSps sps;
  br.skip_bits(4);  // sps_video_parameter_set_id
  const unsigned max_sub_layers_minus1 = br.bits(3);
  sps.temporal_id_nesting = br.flag();
  if (max_sub_layers_minus1 > 6) return Error(Errc::Malformed, "sps_max_sub_layers_minus1");
  sps.max_sub_layers = static_cast<uint8_t>(max_sub_layers_minus1 + 1);
  read_profile_tier_level(br, max_sub_layers_minus1, sps);
  if (br.ue() > 15) return Error(Errc::Malformed, "sps_seq_parameter_set_id");
  sps.chroma_format_idc = br.ue();
  if (sps.chroma_format_idc > 3) return Error(Errc::Malformed, "chroma_format_idc");
  const bool separate_colour_plane = sps.chroma_format_idc == 3 && br.flag();
  auto ok = read_picture_size(br, sps, separate_colour_plane);
  if (!ok) return std::move(ok).error();
  const uint32_t luma = br.ue(), chroma = br.ue();  // bit_depth_*_minus8
  if (br.failed() || luma > 8 || chroma > 8) return Error(Errc::Malformed, "bit_depth_minus8");
  sps.bit_depth_luma = static_cast<uint8_t>(luma + 8);
  sps.bit_depth_chroma = static_cast<uint8_t>(chroma + 8);
  return sps;
}

// Walks the NAL unit arrays and returns the first SPS (empty if there is none).
Result<std::span<const uint8_t>> find_first_sps(ByteReader& r, uint8_t array_count) {
  std::span<const uint8_t> sps;
  for (unsigned a = 0; a < array_count; ++a) {
    const uint8_t nal_type = r.u8() & 0x3F;
    const uint16_t count = r.u16be();
    for (unsigned i = 0; i < count && !r.failed(); ++i) {
      const uint16_t len = r.u16be();
      const auto nal = r.bytes(len);
      if (nal_type == kNalTypeSps && sps.empty()) sps = nal;
    }
    if (r.failed()) return Error(Errc::Truncated, "HEVCDecoderConfigurationRecord NAL array " + std::to_string(a));
  }
  return sps;
}

}  // namespace

Result<HevcSps> parse_hevc_sps(std::span<const uint8_t> nal) {
  if (nal.size() < 2) return Error(Errc::Truncated, "H.265 SPS header");
  if (((nal[0] >> 1) & 0x3F) != kNalTypeSps) return Error(Errc::Malformed, "not an SPS NAL unit");
  BitReader br(nal.subspan(2), BitReader::Mode::Rbsp);
  auto sps = parse_sps_body(br);
  if (!sps) return std::move(sps).error().wrap("H.265 SPS");
  return sps;
}

Result<HevcConfig> parse_hevc_config(std::span<const uint8_t> record) {
  if (record.size() < kConfigFixedSize) return Error(Errc::Truncated, "HEVCDecoderConfigurationRecord header");
  ByteReader r(record);
  HevcConfig c;
  // Version 0 appears in files from early muxers; the layout is the same.
  if (r.u8() > 1) return Error(Errc::Malformed, "HEVCDecoderConfigurationRecord version");
  const uint8_t ptl = r.u8();
  c.profile_space = ptl >> 6;
  c.tier = (ptl & 0x20) != 0;
  c.profile_idc = ptl & 0x1F;
  c.profile_compatibility = r.u32be();
  r.skip(6);  // general_constraint_indicator_flags
  c.level_idc = r.u8();
  r.skip(3);  // min_spatial_segmentation_idc, parallelismType
  c.chroma_format = r.u8() & 0x03;
  c.bit_depth_luma = static_cast<uint8_t>((r.u8() & 0x07) + 8);
  c.bit_depth_chroma = static_cast<uint8_t>((r.u8() & 0x07) + 8);
  r.skip(2);  // avgFrameRate
  c.nalu_length_size = static_cast<uint8_t>((r.u8() & 0x03) + 1);
  c.array_count = r.u8();
  auto sps = find_first_sps(r, c.array_count);
  if (!sps) return std::move(sps).error();
  if (!sps->empty()) {
    if (auto parsed = parse_hevc_sps(*sps)) {
      c.width = parsed->width;
      c.height = parsed->height;
    }
  }
  return c;
}

std::string_view hevc_profile_name(uint8_t profile_idc) {
  switch (profile_idc) {
    case 1: return "Main";
    case 2: return "Main10";
    case 3: return "MainStillPicture";
    case 4: return "RExt";
    default: return "unknown";
  }
}

}  // namespace sluice::media
