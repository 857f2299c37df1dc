// Reading MPEG-TS (ISO/IEC 13818-1) for the demuxer (ts_demuxer.hpp): one 188-byte packet's
// header and adaptation field, PSI sections as they arrive in a PID's packets, and the two tables
// a demuxer needs, the PAT ("Program association table") and the PMT ("Program map table").
// Bounds-checked; nothing throws.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "base/result.hpp"

namespace sluice::media::ts {

struct TsPacket {
  uint16_t pid = 0;
  bool unit_start = false;       // payload_unit_start_indicator
  bool transport_error = false;  // transport_error_indicator: the packet is damaged
  bool scrambled = false;        // transport_scrambling_control != 0
  bool has_payload = false;
  uint8_t continuity = 0;      // continuity_counter
  bool discontinuity = false;  // discontinuity_indicator of the adaptation field
  bool random_access = false;  // random_access_indicator
  std::span<const uint8_t> payload;
};

// `p` is one packet (188 bytes). An error: no sync byte, or an adaptation field longer than the
// packet.
Result<TsPacket> parse_ts_packet(std::span<const uint8_t> p);

// The sections of one PID (pointer_field, a section across packets, several in one packet,
// stuffing), each handed out whole once its CRC_32 checks. Sections are at most 1024 bytes
// (section_length 1021, the limit for PAT and PMT): a longer one is dropped.
class SectionReader {
 public:
  void feed(const TsPacket& packet, std::vector<std::vector<uint8_t>>& sections);
  uint64_t bad_sections() const { return bad_; }

 private:
  void take_whole(std::vector<std::vector<uint8_t>>& sections);

  std::vector<uint8_t> buf_;
  bool open_ = false;  // a section has begun and its start was seen
  uint64_t bad_ = 0;
};

// The PMT's PID of the first program of a PAT section (program_number 0 is the network PID, not
// a program); nothing when the section is not a PAT or names no program.
std::optional<uint16_t> parse_pat(std::span<const uint8_t> section);

struct ProgramMap {
  struct Stream {
    uint8_t type = 0;  // stream_type
    uint16_t pid = 0;
  };
  uint16_t pcr_pid = 0;
  std::vector<Stream> streams;  // at most kMaxPmtStreams, in the table's order
};
inline constexpr size_t kMaxPmtStreams = 16;

// Nothing when the section is not a PMT or its lengths run past it.
std::optional<ProgramMap> parse_pmt(std::span<const uint8_t> section);

}  // namespace sluice::media::ts
