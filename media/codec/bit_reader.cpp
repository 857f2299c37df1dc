#include "media/codec/bit_reader.hpp"

namespace sluice::media {

bool BitReader::next_byte() {
  if (failed_) return false;
  if (mode_ == Mode::Rbsp && zeros_ >= 2 && pos_ < data_.size() && data_[pos_] == 0x03) {
    ++pos_;  // emulation_prevention_three_byte: not part of the RBSP
    zeros_ = 0;
  }
  if (pos_ >= data_.size()) {
    failed_ = true;
    return false;
  }
  cur_ = data_[pos_++];
  zeros_ = cur_ == 0 ? zeros_ + 1 : 0;
  bits_left_ = 8;
  return true;
}

uint32_t BitReader::bits(unsigned n) {
  uint32_t v = 0;
  for (unsigned i = 0; i < n; ++i) {
    if (bits_left_ == 0 && !next_byte()) return 0;
    --bits_left_;
    v = (v << 1) | ((cur_ >> bits_left_) & 1u);
  }
  return v;
}

void BitReader::skip_bits(size_t n) {
  while (n > 0 && !failed_) {
    const unsigned chunk = n > 32 ? 32 : static_cast<unsigned>(n);
    bits(chunk);
    n -= chunk;
  }
}

uint32_t BitReader::ue() {
  unsigned zeros = 0;
  while (!failed_ && !flag()) {
    if (++zeros > 31) {
      failed_ = true;
      return 0;
    }
  }
  if (failed_) return 0;
  const uint64_t v = ((uint64_t{1} << zeros) - 1) + bits(zeros);
  return failed_ ? 0 : static_cast<uint32_t>(v);
}

int32_t BitReader::se() {
  const int64_t k = ue();
  return static_cast<int32_t>((k & 1) ? (k + 1) / 2 : -(k / 2));
}

}  // namespace sluice::media
