#include "media/rtp/h264_nal.hpp"

#include "base/byte_io.hpp"

namespace sluice::media::rtp {

namespace {

bool read_sets(ByteReader& r, size_t count, std::vector<std::span<const uint8_t>>& out) {
  for (size_t i = 0; i < count; ++i) {
    const size_t len = r.u16be();
    auto set = r.bytes(len);
    if (r.failed() || set.empty()) return false;
    out.push_back(set);
  }
  return true;
}

}  // namespace

std::optional<AvcRecord> read_avc_record(std::span<const uint8_t> record) {
  ByteReader r(record);
  r.skip(4);  // configurationVersion, profile, compatibility, level
  AvcRecord out;
  out.length_size = static_cast<uint8_t>((r.u8() & 0x03) + 1);
  const size_t sps_count = r.u8() & 0x1F;
  if (r.failed() || !read_sets(r, sps_count, out.sps)) return std::nullopt;
  const size_t pps_count = r.u8();
  if (r.failed() || !read_sets(r, pps_count, out.pps)) return std::nullopt;
  return out;
}

}  // namespace sluice::media::rtp
