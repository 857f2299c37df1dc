// Payload and Slice: immutable, reference-counted bytes shared on the fan-out path.
//
// A media message is copied once, at ingest, into a Payload. From then on publishers, hubs,
// subscribers, write requests and recorders hold Slices of it; nothing copies the bytes again.
// The count is atomic because a payload may cross worker loops; increments are relaxed.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

namespace sluice {

class Payload {
 public:
  explicit Payload(std::vector<uint8_t>&& bytes) : bytes_(std::move(bytes)) {}
  Payload(const Payload&) = delete;
  Payload& operator=(const Payload&) = delete;

  const uint8_t* data() const { return bytes_.data(); }
  size_t size() const { return bytes_.size(); }

  void retain() { refs_.fetch_add(1, std::memory_order_relaxed); }
  void release() {
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }
  uint32_t use_count() const { return refs_.load(std::memory_order_relaxed); }

 private:
  ~Payload() = default;
  std::atomic<uint32_t> refs_{1};
  std::vector<uint8_t> bytes_;
};

// A view of part of a Payload that keeps it alive. Move-only: sharing is explicit (share()).
class Slice {
 public:
  Slice() = default;
  ~Slice() { reset(); }
  Slice(Slice&& o) noexcept : p_(std::exchange(o.p_, nullptr)), off_(o.off_), len_(o.len_) {}
  Slice& operator=(Slice&& o) noexcept {
    if (this != &o) {
      reset();
      p_ = std::exchange(o.p_, nullptr);
      off_ = o.off_;
      len_ = o.len_;
    }
    return *this;
  }
  Slice(const Slice&) = delete;
  Slice& operator=(const Slice&) = delete;

  // Takes ownership of bytes without copying them.
  static Slice adopt(std::vector<uint8_t>&& bytes) {
    Slice s;
    s.len_ = bytes.size();
    s.p_ = new Payload(std::move(bytes));
    return s;
  }
  // Copies bytes into a new payload.
  static Slice copy_of(std::span<const uint8_t> bytes) {
    return adopt(std::vector<uint8_t>(bytes.begin(), bytes.end()));
  }
  static Slice copy_of(std::string_view s) {
    return copy_of(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(s.data()), s.size()));
  }

  Slice share() const { return share(0, len_); }
  // A sub-slice [pos, pos+len) of this slice, clamped to its bounds.
  Slice share(size_t pos, size_t len) const {
    Slice s;
    if (!p_) return s;
    if (pos > len_) pos = len_;
    if (len > len_ - pos) len = len_ - pos;
    p_->retain();
    s.p_ = p_;
    s.off_ = off_ + pos;
    s.len_ = len;
    return s;
  }
  // A private copy of the viewed bytes.
  Slice clone() const { return copy_of(span()); }

  const uint8_t* data() const { return p_ ? p_->data() + off_ : nullptr; }
  size_t size() const { return len_; }
  bool empty() const { return len_ == 0; }
  uint8_t operator[](size_t i) const { return data()[i]; }
  std::span<const uint8_t> span() const { return {data(), len_}; }
  uint32_t use_count() const { return p_ ? p_->use_count() : 0; }

  void reset() {
    if (p_) p_->release();
    p_ = nullptr;
    off_ = len_ = 0;
  }

 private:
  Payload* p_ = nullptr;
  size_t off_ = 0;
  size_t len_ = 0;
};

inline std::span<const uint8_t> as_bytes(std::string_view s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

}  // namespace sluice
