// The H.264 NAL unit facts the RTP payload format uses (docs/rtp.md, "H.264 over RTP"): NAL unit
// types, the FU header bits, and reading the AVCC form the hub carries (an
// AVCDecoderConfigurationRecord's parameter sets, NAL units behind big-endian lengths).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace sluice::media::rtp {

// nal_unit_type, the low 5 bits of the NAL header (ITU-T H.264 Table 7-1; RFC 6184 5.2).
inline constexpr uint8_t kNalIdr = 5;
inline constexpr uint8_t kNalSps = 7;
inline constexpr uint8_t kNalPps = 8;
inline constexpr uint8_t kNalAud = 9;
inline constexpr uint8_t kNalFiller = 12;
inline constexpr uint8_t kNalStapA = 24;
inline constexpr uint8_t kNalFuA = 28;
// FU header: S(tart), E(nd), R(eserved), then the fragmented unit's type.
inline constexpr uint8_t kFuStart = 0x80;
inline constexpr uint8_t kFuEnd = 0x40;

struct AvcRecord {
  uint8_t length_size = 4;
  std::vector<std::span<const uint8_t>> sps, pps;  // into the record
};

// The parameter sets of an AVCDecoderConfigurationRecord (ISO 14496-15 5.3.3.1), bounds-checked:
// nothing when it is shorter than its header, a set runs past its end or a set is empty.
std::optional<AvcRecord> read_avc_record(std::span<const uint8_t> record);

// Calls f(nal) for each NAL unit of an AVCC sample with `length_size`-byte lengths; a length that
// runs past the end stops the walk, and empty units are skipped.
template <class F>
void for_each_avcc_nal(std::span<const uint8_t> sample, uint8_t length_size, F&& f) {
  size_t pos = 0;
  while (sample.size() - pos >= length_size) {
    size_t len = 0;
    for (size_t i = 0; i < length_size; ++i) len = len << 8 | sample[pos + i];
    pos += length_size;
    if (len > sample.size() - pos) return;
    if (len > 0) f(sample.subspan(pos, len));
    pos += len;
  }
}

}  // namespace sluice::media::rtp
