// MSB-first bit reader for codec headers: plain (AudioSpecificConfig) or RBSP (H.264/HEVC
// parameter sets, where the encoder inserted 0x03 after every 0x00 0x00 pair so that the NAL
// payload never imitates a start code; those emulation-prevention bytes are skipped on the fly,
// so no unescaped copy is made).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace sluice::media {

class BitReader {
 public:
  enum class Mode : uint8_t { Plain, Rbsp };

  explicit BitReader(std::span<const uint8_t> data, Mode mode = Mode::Plain) : data_(data), mode_(mode) {}

  // Reads n bits (n <= 32). Past the end: sets failed() and returns 0.
  uint32_t bits(unsigned n);
  bool flag() { return bits(1) != 0; }
  void skip_bits(size_t n);
  // Unsigned and signed Exp-Golomb codes (H.264 9.1). More than 31 leading zeros is garbage.
  uint32_t ue();
  int32_t se();

  bool failed() const { return failed_; }

 private:
  bool next_byte();

  std::span<const uint8_t> data_;
  Mode mode_;
  size_t pos_ = 0;          // next byte of data_ to load
  uint8_t cur_ = 0;         // byte being consumed
  unsigned bits_left_ = 0;  // unread bits of cur_
  unsigned zeros_ = 0;      // consecutive 0x00 bytes just loaded (emulation prevention)
  bool failed_ = false;
};

}  // namespace sluice::media
