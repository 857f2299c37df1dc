#include "media/ts/pes.hpp"

namespace sluice::media::ts {

namespace {

// Stream ids whose PES packets have no optional header: program_stream_map, padding,
// private_stream_2, ECM, EMM, program_stream_directory, DSMCC and H.222.1 type E.
bool without_optional_header(uint8_t id) {
  return id == 0xBC || id == 0xBE || id == 0xBF || id == 0xF0 || id == 0xF1 || id == 0xFF || id == 0xF2 || id == 0xF8;
}

// A 33-bit timestamp in its 5 bytes, marker bits between the parts.
std::optional<uint64_t> timestamp(std::span<const uint8_t> b) {
  if ((b[0] & 0x01) == 0 || (b[2] & 0x01) == 0 || (b[4] & 0x01) == 0) return std::nullopt;
  return uint64_t(b[0] >> 1 & 0x07) << 30 | uint64_t(b[1]) << 22 | uint64_t(b[2] >> 1) << 15 | uint64_t(b[3]) << 7 |
         uint64_t(b[4] >> 1);
}

}  // namespace

Result<PesHeader> parse_pes_header(std::span<const uint8_t> pes) {
  if (pes.size() < 6 || pes[0] != 0 || pes[1] != 0 || pes[2] != 1) return Error(Errc::Malformed, "no PES start code");
  PesHeader h;
  h.stream_id = pes[3];
  h.packet_length = size_t(pes[4]) << 8 | pes[5];
  if (without_optional_header(h.stream_id)) {
    h.payload_offset = 6;
    return h;
  }
  if (pes.size() < 9) return Error(Errc::Truncated, "PES header");
  if ((pes[6] & 0xC0) != 0x80) return Error(Errc::Malformed, "PES header marker bits");
  const uint8_t pts_dts = pes[7] >> 6;
  h.payload_offset = 9 + size_t(pes[8]);
  if (h.payload_offset > pes.size()) return Error(Errc::Truncated, "PES header data");
  if (pts_dts == 1) return Error(Errc::Malformed, "PES PTS_DTS_flags 01");
  const size_t needed = pts_dts == 3 ? 10 : pts_dts == 2 ? 5 : 0;
  if (size_t(pes[8]) < needed) return Error(Errc::Malformed, "PES header shorter than its timestamps");
  if (pts_dts & 0x02) {
    h.pts = timestamp(pes.subspan(9, 5));
    if (!h.pts) return Error(Errc::Malformed, "PES PTS marker bits");
  }
  if (pts_dts == 3) {
    h.dts = timestamp(pes.subspan(14, 5));
    if (!h.dts) return Error(Errc::Malformed, "PES DTS marker bits");
  }
  return h;
}

}  // namespace sluice::media::ts
