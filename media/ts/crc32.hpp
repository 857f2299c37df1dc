// The CRC_32 of MPEG-2 PSI sections (ISO/IEC 13818-1 Annex A, "CRC decoder model"): polynomial
// 0x04C11DB7, MSB first, initial value 0xFFFFFFFF, no final XOR, no bit reflection. A section
// including its own CRC_32 field checks to 0.
#pragma once

#include <array>
#include <cstdint>
#include <span>

namespace sluice::media::ts {

namespace detail {

constexpr std::array<uint32_t, 256> make_crc32_table() {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i << 24;
    for (int bit = 0; bit < 8; ++bit) c = (c & 0x80000000u) ? (c << 1) ^ 0x04C11DB7u : c << 1;
    table[i] = c;
  }
  return table;
}

inline constexpr std::array<uint32_t, 256> kCrc32Table = make_crc32_table();

}  // namespace detail

constexpr uint32_t crc32_mpeg2(std::span<const uint8_t> data) {
  uint32_t crc = 0xFFFFFFFFu;
  for (uint8_t b : data) crc = (crc << 8) ^ detail::kCrc32Table[((crc >> 24) ^ b) & 0xFF];
  return crc;
}

}  // namespace sluice::media::ts
