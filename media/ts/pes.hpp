// The header of a PES packet ("PES packet", ISO/IEC 13818-1 2.4.3.6), as the demuxer
// (ts_demuxer.hpp) reads it from a reassembled packet: the stream id, the declared length, the
// PTS and DTS (33 bits, 90 kHz) and where the elementary stream's bytes begin.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "base/result.hpp"

namespace sluice::media::ts {

struct PesHeader {
  uint8_t stream_id = 0;
  size_t packet_length = 0;  // PES_packet_length: the bytes after this field; 0 unbounded (video)
  std::optional<uint64_t> pts;
  std::optional<uint64_t> dts;  // only when it differs from the PTS
  size_t payload_offset = 0;    // the first byte of the elementary stream's data
};

// An error when the packet start code is missing, the marker bits are wrong, or the header runs
// past `pes`.
Result<PesHeader> parse_pes_header(std::span<const uint8_t> pes);

}  // namespace sluice::media::ts
