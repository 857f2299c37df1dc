// FourCC codes used by Enhanced RTMP to name codecs (docs/protocol.md, "FourCC codes").
#pragma once

#include <cstdint>
#include <string>

namespace sluice::media::fourcc {

// Big-endian packing, as the codes appear on the wire and in onMetaData numbers.
constexpr uint32_t make(char a, char b, char c, char d) {
  return uint32_t(uint8_t(a)) << 24 | uint32_t(uint8_t(b)) << 16 | uint32_t(uint8_t(c)) << 8 | uint32_t(uint8_t(d));
}

inline constexpr uint32_t kAvc1 = make('a', 'v', 'c', '1');
inline constexpr uint32_t kHvc1 = make('h', 'v', 'c', '1');
inline constexpr uint32_t kVvc1 = make('v', 'v', 'c', '1');
inline constexpr uint32_t kAv01 = make('a', 'v', '0', '1');
inline constexpr uint32_t kVp09 = make('v', 'p', '0', '9');
inline constexpr uint32_t kVp08 = make('v', 'p', '0', '8');

inline constexpr uint32_t kMp4a = make('m', 'p', '4', 'a');
inline constexpr uint32_t kOpus = make('O', 'p', 'u', 's');
inline constexpr uint32_t kFlac = make('f', 'L', 'a', 'C');
inline constexpr uint32_t kAc3 = make('a', 'c', '-', '3');
inline constexpr uint32_t kEac3 = make('e', 'c', '-', '3');
inline constexpr uint32_t kMp3 = make('.', 'm', 'p', '3');

// Printable form for logs; bytes outside printable ASCII become '?'.
inline std::string to_string(uint32_t code) {
  std::string s(4, '?');
  for (int i = 0; i < 4; ++i) {
    const char c = static_cast<char>(code >> (24 - 8 * i));
    if (c >= 0x20 && c < 0x7F) s[i] = c;
  }
  return s;
}

}  // namespace sluice::media::fourcc
