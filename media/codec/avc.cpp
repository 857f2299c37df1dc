#include "media/codec/avc.hpp"

#include "media/codec/bit_reader.hpp"
#include "base/byte_io.hpp"

namespace sluice::media {

namespace {

constexpr uint8_t kNalTypeSps = 7;
// Picture sizes beyond this are garbage (the largest H.264 level allows 8192x4320).
constexpr uint64_t kMaxDimension = 16384;

// Profiles whose SPS carries chroma_format_idc and bit depths (H.264 7.3.2.1.1).
bool has_chroma_info(uint8_t profile_idc) {
  switch (profile_idc) {
    case 100:
    case 110:
    case 122:
    case 244:
    case 44:
    case 83:
    case 86:
    case 118:
    case 128:
    case 138:
    case 139:
    case 134:
    case 135: return true;
    default: return false;
  }
}

// scaling_list() is parsed only to get past it; the values are not needed.
void skip_scaling_list(BitReader& br, int size) {
  int last = 8;
  int next = 8;
  for (int j = 0; j < size && !br.failed(); ++j) {
    if (next != 0) {
      const int32_t delta = br.se();
      next = static_cast<int>((last + int64_t{delta} + 256) % 256);
      if (next < 0) next += 256;
    }
    if (next != 0) last = next;
  }
}

Result<void> read_chroma_info(BitReader& br, AvcSps& sps, bool& separate_colour_plane) {
  sps.chroma_format_idc = br.ue();
  if (sps.chroma_format_idc > 3) return Error(Errc::Malformed, "chroma_format_idc");
  if (sps.chroma_format_idc == 3) separate_colour_plane = br.flag();
  sps.bit_depth_luma = br.ue() + 8;
  const uint32_t bit_depth_chroma = br.ue() + 8;
  if (sps.bit_depth_luma > 14 || bit_depth_chroma > 14) return Error(Errc::Malformed, "bit depth");
  br.skip_bits(1);  // qpprime_y_zero_transform_bypass_flag
  if (br.flag()) {  // seq_scaling_matrix_present_flag
    const int lists = sps.chroma_format_idc != 3 ? 8 : 12;
    for (int i = 0; i < lists && !br.failed(); ++i) {
      if (br.flag()) skip_scaling_list(br, i < 6 ? 16 : 64);
    }
  }
  return {};
}

Result<void> skip_pic_order_cnt(BitReader& br) {
  const uint32_t poc_type = br.ue();
  if (poc_type == 0) {
    br.ue();  // log2_max_pic_order_cnt_lsb_minus4
  } else if (poc_type == 1) {
    br.skip_bits(1);  // delta_pic_order_always_zero_flag
    br.se();          // offset_for_non_ref_pic
    br.se();          // offset_for_top_to_bottom_field
    const uint32_t cycle = br.ue();
    if (cycle > 255) return Error(Errc::Malformed, "num_ref_frames_in_pic_order_cnt_cycle");
    for (uint32_t i = 0; i < cycle && !br.failed(); ++i) br.se();
  } else if (poc_type != 2) {
    return Error(Errc::Malformed, "pic_order_cnt_type");
  }
  return {};
}

// Frame size in luma samples after the cropping window (H.264 7.4.2.1.1, CropUnitX/Y).
Result<void> read_picture_size(BitReader& br, AvcSps& sps, bool separate_colour_plane) {
  const uint64_t width_mbs = uint64_t{br.ue()} + 1;
  const uint64_t height_map_units = uint64_t{br.ue()} + 1;
  const bool frame_mbs_only = br.flag();
  if (!frame_mbs_only) br.skip_bits(1);  // mb_adaptive_frame_field_flag
  br.skip_bits(1);                       // direct_8x8_inference_flag
  uint64_t crop_left = 0, crop_right = 0, crop_top = 0, crop_bottom = 0;
  if (br.flag()) {
    crop_left = br.ue();
    crop_right = br.ue();
    crop_top = br.ue();
    crop_bottom = br.ue();
  }
  if (br.failed()) return Error(Errc::Truncated, "SPS picture size");
  const uint64_t chroma_array_type = separate_colour_plane ? 0 : sps.chroma_format_idc;
  const uint64_t sub_width = chroma_array_type == 3 || chroma_array_type == 0 ? 1 : 2;
  const uint64_t sub_height = chroma_array_type == 1 ? 2 : 1;
  const uint64_t crop_unit_x = sub_width;
  const uint64_t crop_unit_y = sub_height * (frame_mbs_only ? 1 : 2);
  const uint64_t width = width_mbs * 16;
  const uint64_t height = height_map_units * 16 * (frame_mbs_only ? 1 : 2);
  const uint64_t crop_x = crop_unit_x * (crop_left + crop_right);
  const uint64_t crop_y = crop_unit_y * (crop_top + crop_bottom);
  if (width > kMaxDimension || height > kMaxDimension) return Error(Errc::Malformed, "picture size");
  if (crop_x >= width || crop_y >= height) return Error(Errc::Malformed, "cropping window");
  sps.width = static_cast<uint32_t>(width - crop_x);
  sps.height = static_cast<uint32_t>(height - crop_y);
  return {};
}

Result<AvcSps> parse_sps_body(BitReader& br) {
  AvcSps sps;
  sps.profile_idc = static_cast<uint8_t>(br.bits(8));
  sps.constraint_flags = static_cast<uint8_t>(br.bits(8));
  sps.level_idc = static_cast<uint8_t>(br.bits(8));
  if (br.ue() > 31) return Error(Errc::Malformed, "seq_parameter_set_id");
  bool separate_colour_plane = false;
  if (has_chroma_info(sps.profile_idc)) {
    auto ok = read_chroma_info(br, sps, separate_colour_plane);
    if (!ok) return std::move(ok).error();
  }
  if (br.ue() > 12) return Error(Errc::Malformed, "log2_max_frame_num_minus4");
  auto ok = skip_pic_order_cnt(br);
  if (!ok) return std::move(ok).error();
  br.ue();          // max_num_ref_frames
  br.skip_bits(1);  // gaps_in_frame_num_value_allowed_flag
  ok = read_picture_size(br, sps, separate_colour_plane);
  if (!ok) return std::move(ok).error();
  return sps;
}

// Reads `count` u16-length-prefixed NAL units, returning the first one.
Result<std::span<const uint8_t>> read_nal_list(ByteReader& r, unsigned count, const char* what) {
  std::span<const uint8_t> first;
  for (unsigned i = 0; i < count; ++i) {
    const uint16_t len = r.u16be();
    const auto nal = r.bytes(len);
    if (r.failed()) return Error(Errc::Truncated, what);
    if (i == 0) first = nal;
  }
  return first;
}

}  // namespace

Result<AvcSps> parse_avc_sps(std::span<const uint8_t> nal) {
  if (nal.empty()) return Error(Errc::Truncated, "empty SPS");
  if ((nal[0] & 0x1F) != kNalTypeSps) return Error(Errc::Malformed, "not an SPS NAL unit");
  BitReader br(nal.subspan(1), BitReader::Mode::Rbsp);
  auto sps = parse_sps_body(br);
  if (!sps) return std::move(sps).error().wrap("H.264 SPS");
  return sps;
}

Result<AvcConfig> parse_avc_config(std::span<const uint8_t> record) {
  ByteReader r(record);
  AvcConfig c;
  const uint8_t version = r.u8();
  c.profile = r.u8();
  c.profile_compatibility = r.u8();
  c.level = r.u8();
  c.nalu_length_size = static_cast<uint8_t>((r.u8() & 0x03) + 1);
  c.sps_count = r.u8() & 0x1F;
  if (r.failed()) return Error(Errc::Truncated, "AVCDecoderConfigurationRecord header");
  if (version != 1) return Error(Errc::Malformed, "AVCDecoderConfigurationRecord version " + std::to_string(version));
  auto sps = read_nal_list(r, c.sps_count, "AVCDecoderConfigurationRecord SPS");
  if (!sps) return std::move(sps).error();
  c.pps_count = r.u8();
  if (r.failed()) return Error(Errc::Truncated, "AVCDecoderConfigurationRecord PPS count");
  auto pps = read_nal_list(r, c.pps_count, "AVCDecoderConfigurationRecord PPS");
  if (!pps) return std::move(pps).error();
  // Trailing High-profile fields (chroma format, bit depths, SPS extensions) are not needed.
  if (c.sps_count > 0) {
    if (auto parsed = parse_avc_sps(*sps)) {
      c.width = parsed->width;
      c.height = parsed->height;
    }
  }
  return c;
}

std::string_view avc_profile_name(uint8_t profile_idc) {
  switch (profile_idc) {
    case 66: return "Baseline";
    case 77: return "Main";
    case 88: return "Extended";
    case 100: return "High";
    case 110: return "High10";
    case 122: return "High422";
    case 244: return "High444";
    case 44: return "CAVLC444";
    default: return "unknown";
  }
}

}  // namespace sluice::media
