// MPEG-TS numbers both the muxer (ts_muxer.hpp) and the demuxer (ts_demuxer.hpp) use
// (ISO/IEC 13818-1).
#pragma once

#include <cstddef>
#include <cstdint>

namespace sluice::media::ts {

inline constexpr size_t kPacketSize = 188;
inline constexpr uint8_t kSyncByte = 0x47;

// "Stream type assignments"; MPEG-1/2 audio (MP3 and the like) only read.
inline constexpr uint8_t kStreamTypeMpeg1Audio = 0x03;
inline constexpr uint8_t kStreamTypeMpeg2Audio = 0x04;
inline constexpr uint8_t kStreamTypeAdtsAac = 0x0F;
inline constexpr uint8_t kStreamTypeH264 = 0x1B;
inline constexpr uint8_t kStreamTypeHevc = 0x24;

inline constexpr uint64_t kTimestampMask = (uint64_t{1} << 33) - 1;  // PTS, DTS, PCR base: 33 bits

}  // namespace sluice::media::ts
