// Explicit big- and little-endian readers and writers; never pointer punning.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace sluice {

// Bounds-checked cursor over a byte span. Reads past the end set failed() and return zero.
class ByteReader {
 public:
  explicit ByteReader(std::span<const uint8_t> data) : data_(data) {}

  size_t position() const { return pos_; }
  size_t remaining() const { return pos_ <= data_.size() ? data_.size() - pos_ : 0; }
  bool failed() const { return failed_; }
  bool empty() const { return remaining() == 0; }
  std::span<const uint8_t> rest() const { return data_.subspan(pos_ <= data_.size() ? pos_ : data_.size()); }

  bool has(size_t n) const { return remaining() >= n; }

  uint8_t u8() { return static_cast<uint8_t>(be(1)); }
  uint16_t u16be() { return static_cast<uint16_t>(be(2)); }
  uint32_t u24be() { return static_cast<uint32_t>(be(3)); }
  uint32_t u32be() { return static_cast<uint32_t>(be(4)); }
  uint64_t u64be() { return be(8); }
  int32_t s24be() {
    uint32_t v = u24be();
    return (v & 0x800000u) ? static_cast<int32_t>(v | 0xFF000000u) : static_cast<int32_t>(v);
  }
  uint32_t u32le() {
    if (!take(4)) return 0;
    const uint8_t* p = data_.data() + pos_ - 4;
    return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
  }
  double f64be() {
    uint64_t bits = u64be();
    double d;
    std::memcpy(&d, &bits, sizeof d);
    return d;
  }
  std::span<const uint8_t> bytes(size_t n) {
    if (!take(n)) return {};
    return data_.subspan(pos_ - n, n);
  }
  std::string_view string(size_t n) {
    auto b = bytes(n);
    return {reinterpret_cast<const char*>(b.data()), b.size()};
  }
  bool skip(size_t n) { return take(n); }

 private:
  bool take(size_t n) {
    if (failed_ || remaining() < n) {
      failed_ = true;
      return false;
    }
    pos_ += n;
    return true;
  }
  uint64_t be(size_t n) {
    if (!take(n)) return 0;
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i) v = (v << 8) | data_[pos_ - n + i];
    return v;
  }

  std::span<const uint8_t> data_;
  size_t pos_ = 0;
  bool failed_ = false;
};

// Appends to a byte vector.
class ByteWriter {
 public:
  explicit ByteWriter(std::vector<uint8_t>& out) : out_(out) {}

  void u8(uint8_t v) { out_.push_back(v); }
  void u16be(uint16_t v) { be(v, 2); }
  void u24be(uint32_t v) { be(v, 3); }
  void u32be(uint32_t v) { be(v, 4); }
  void u64be(uint64_t v) { be(v, 8); }
  void u32le(uint32_t v) {
    for (int i = 0; i < 4; ++i) out_.push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
  void f64be(double d) {
    uint64_t bits;
    std::memcpy(&bits, &d, sizeof bits);
    u64be(bits);
  }
  void bytes(std::span<const uint8_t> b) { out_.insert(out_.end(), b.begin(), b.end()); }
  void string(std::string_view s) { out_.insert(out_.end(), s.begin(), s.end()); }
  size_t size() const { return out_.size(); }

 private:
  void be(uint64_t v, int n) {
    for (int i = n - 1; i >= 0; --i) out_.push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
  std::vector<uint8_t>& out_;
};

// Fixed-position big-endian stores into a raw buffer (header arenas, handshake packets).
inline void store_u32be(uint8_t* p, uint32_t v) {
  p[0] = uint8_t(v >> 24);
  p[1] = uint8_t(v >> 16);
  p[2] = uint8_t(v >> 8);
  p[3] = uint8_t(v);
}
inline void store_u24be(uint8_t* p, uint32_t v) {
  p[0] = uint8_t(v >> 16);
  p[1] = uint8_t(v >> 8);
  p[2] = uint8_t(v);
}
inline uint32_t load_u32be(const uint8_t* p) {
  return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | uint32_t(p[3]);
}
inline uint32_t load_u24be(const uint8_t* p) { return uint32_t(p[0]) << 16 | uint32_t(p[1]) << 8 | uint32_t(p[2]); }

}  // namespace sluice
