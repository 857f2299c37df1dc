#include "media/ts/annexb.hpp"

#include <iterator>
#include <utility>

#include "base/byte_io.hpp"

namespace sluice::media::ts {

namespace {

constexpr uint8_t kAvcNalSps = 7;
constexpr uint8_t kAvcNalAud = 9;
constexpr uint8_t kHevcNalVps = 32;
constexpr uint8_t kHevcNalSps = 33;
constexpr uint8_t kHevcNalPps = 34;
constexpr uint8_t kHevcNalAud = 35;

// H.264 7.3.2.4: primary_pic_type 7 (any slice type), then the RBSP stop bit.
constexpr uint8_t kAvcAud[] = {0, 0, 0, 1, 0x09, 0xF0};
// H.265 7.3.2.5: NAL header type 35, layer 0, TemporalId 0 (+1); pic_type 2 (I, P, B) + stop bit.
constexpr uint8_t kHevcAud[] = {0, 0, 0, 1, 0x46, 0x01, 0x50};

// AVCDecoderConfigurationRecord: version 1, profile, compatibility, level, lengthSizeMinusOne.
constexpr size_t kAvcLengthByte = 4;
// HEVCDecoderConfigurationRecord: 21 bytes of profile and format fields, then lengthSizeMinusOne
// and numOfArrays.
constexpr size_t kHevcLengthByte = 21;
constexpr size_t kHevcFixedSize = 23;

void append_nal(std::vector<uint8_t>& out, std::span<const uint8_t> nal) {
  if (nal.empty()) return;
  out.insert(out.end(), std::begin(kStartCode), std::end(kStartCode));
  out.insert(out.end(), nal.begin(), nal.end());
}

// A list of `count` NAL units behind 16-bit lengths; appended to `out` when `keep`.
bool read_nal_list(ByteReader& r, unsigned count, bool keep, std::vector<uint8_t>& out) {
  for (unsigned i = 0; i < count; ++i) {
    const uint16_t len = r.u16be();
    const auto nal = r.bytes(len);
    if (r.failed()) return false;
    if (keep) append_nal(out, nal);
  }
  return true;
}

}  // namespace

AnnexB::AnnexB(hls::Codec codec, std::span<const uint8_t> record) : codec_(codec) {
  if (codec == hls::Codec::Avc) parse_avc(record);
  if (codec == hls::Codec::Hevc) parse_hevc(record);
}

void AnnexB::parse_avc(std::span<const uint8_t> record) {
  if (record.size() > kAvcLengthByte) length_size_ = static_cast<uint8_t>((record[kAvcLengthByte] & 0x03) + 1);
  ByteReader r(record);
  if (r.u8() != 1) return;  // configurationVersion
  r.skip(4);
  const unsigned sps_count = r.u8() & 0x1F;
  std::vector<uint8_t> sets;
  if (r.failed() || !read_nal_list(r, sps_count, true, sets)) return;
  const unsigned pps_count = r.u8();
  if (r.failed() || !read_nal_list(r, pps_count, true, sets)) return;
  // The High-profile tail (chroma format, bit depths, SPS extensions) is not needed.
  parameter_sets_ = std::move(sets);
}

void AnnexB::parse_hevc(std::span<const uint8_t> record) {
  if (record.size() < kHevcFixedSize) return;
  length_size_ = static_cast<uint8_t>((record[kHevcLengthByte] & 0x03) + 1);
  const unsigned arrays = record[kHevcFixedSize - 1];
  // Check the whole structure first, then copy VPS, SPS, PPS in that order whatever the order of
  // the arrays (a decoder needs each before the one that refers to it); SEI arrays are left out.
  std::vector<uint8_t> sets;
  constexpr int kCheckOnly = -1;
  for (int wanted : {kCheckOnly, int{kHevcNalVps}, int{kHevcNalSps}, int{kHevcNalPps}}) {
    ByteReader r(record.subspan(kHevcFixedSize));
    for (unsigned a = 0; a < arrays; ++a) {
      const int type = r.u8() & 0x3F;
      const unsigned count = r.u16be();
      if (r.failed() || !read_nal_list(r, count, type == wanted, sets)) return;
    }
  }
  parameter_sets_ = std::move(sets);
}

std::span<const uint8_t> AnnexB::aud() const {
  if (codec_ == hls::Codec::Hevc) return kHevcAud;
  return kAvcAud;
}

AnnexB::Plan AnnexB::plan(std::span<const uint8_t> sample, bool keyframe) const {
  Plan p;
  if (!valid()) return p;
  const uint8_t aud_type = codec_ == hls::Codec::Hevc ? kHevcNalAud : kAvcNalAud;
  const uint8_t sps_type = codec_ == hls::Codec::Hevc ? kHevcNalSps : kAvcNalSps;
  bool first_is_aud = false;
  bool has_sps = false;
  size_t bytes = 0;
  for_each_nal(sample, [&](std::span<const uint8_t> nal) {
    const uint8_t type = nal_type(nal[0]);
    // A cut-off AUD (a header without its picture type) does not count: ours goes in front.
    if (p.nal_units == 0) first_is_aud = type == aud_type && nal.size() + sizeof kStartCode >= aud().size();
    has_sps = has_sps || type == sps_type;
    ++p.nal_units;
    bytes += sizeof kStartCode + nal.size();
  });
  p.aud = !first_is_aud;
  p.parameter_sets = keyframe && !has_sps && !parameter_sets_.empty();
  p.size = bytes + (p.aud ? aud().size() : 0) + (p.parameter_sets ? parameter_sets_.size() : 0);
  return p;
}

}  // namespace sluice::media::ts
