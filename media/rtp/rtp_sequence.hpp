// RTP sequence numbers (16 bits) and timestamps (32 bits) wrap; these compare them modulo their
// width and extend them to 64 bits against the last value seen (docs/rtp.md, "Wrap").
#pragma once

#include <cstdint>

namespace sluice::media::rtp {

// a - b as a signed distance: positive when a is newer, within half the sequence space.
constexpr int16_t seq_diff(uint16_t a, uint16_t b) { return static_cast<int16_t>(static_cast<uint16_t>(a - b)); }
constexpr bool seq_newer(uint16_t a, uint16_t b) { return seq_diff(a, b) > 0; }

// The order check of a depacketiser, which takes packets in sequence order: a packet at or behind
// the last one taken is stale (dropped); one past the last + 1 follows `missing` lost packets.
class SequenceGate {
 public:
  struct Step {
    bool stale = false;
    bool first = false;    // the stream's first packet
    uint16_t missing = 0;  // packets lost just before this one
  };
  constexpr Step pass(uint16_t sequence) {
    if (!started_) {
      started_ = true;
      last_ = sequence;
      return {false, true, 0};
    }
    const int16_t step = seq_diff(sequence, last_);
    if (step <= 0) return {true, false, 0};
    last_ = sequence;
    return {false, false, static_cast<uint16_t>(step - 1)};
  }

 private:
  bool started_ = false;
  uint16_t last_ = 0;
};

// Extends a wrapping counter of `Bits` bits to 64 bits: each value is taken as the one nearest
// to the last value returned, so a step back (a reordered packet) stays behind and a step
// forward past the top goes on counting.
template <unsigned Bits>
class Unwrapper {
 public:
  int64_t unwrap(uint64_t value) {
    constexpr uint64_t kMask = (uint64_t{1} << Bits) - 1;
    constexpr int64_t kHalf = int64_t{1} << (Bits - 1);
    value &= kMask;
    if (!started_) {
      started_ = true;
      last_ = static_cast<int64_t>(value);
      return last_;
    }
    int64_t delta = static_cast<int64_t>(value) - static_cast<int64_t>(static_cast<uint64_t>(last_) & kMask);
    if (delta >= kHalf) delta -= int64_t{1} << Bits;
    if (delta < -kHalf) delta += int64_t{1} << Bits;
    last_ += delta;
    return last_;
  }
  bool started() const { return started_; }
  int64_t last() const { return last_; }

 private:
  bool started_ = false;
  int64_t last_ = 0;
};

using SeqUnwrapper = Unwrapper<16>;
using TimestampUnwrapper = Unwrapper<32>;

}  // namespace sluice::media::rtp
