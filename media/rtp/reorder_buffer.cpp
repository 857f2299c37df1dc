#include "media/rtp/reorder_buffer.hpp"

#include <algorithm>

#include "media/rtp/rtp_sequence.hpp"

namespace sluice::media::rtp {

ReorderBuffer::ReorderBuffer(Limits limits) : limits_(limits) {
  // At least 2 slots, and never so many that two held numbers could share one.
  limits_.capacity = std::clamp<size_t>(limits_.capacity, 2, 16384);
  slots_.resize(limits_.capacity);
}

void ReorderBuffer::release_run(std::vector<Packet>& out) {
  while (held_ > 0) {
    Slot& s = slot(next_);
    if (!s.used || s.sequence != next_) return;
    out.push_back({next_, std::move(s.bytes)});
    s.used = false;
    --held_;
    ++stats_.released;
    ++next_;
  }
}

// Moves past next_: its packet leaves if held, else it is given up.
void ReorderBuffer::skip_one(std::vector<Packet>& out) {
  Slot& s = slot(next_);
  if (s.used && s.sequence == next_) {
    out.push_back({next_, std::move(s.bytes)});
    s.used = false;
    --held_;
    ++stats_.released;
  } else {
    ++stats_.given_up;
  }
  ++next_;
}

void ReorderBuffer::push(uint16_t sequence, Slice bytes, int64_t now_ms, std::vector<Packet>& out) {
  ++stats_.received;
  if (!started_) {
    started_ = true;
    next_ = sequence;
  }
  int distance = seq_diff(sequence, next_);
  if (distance > kRestartDistance || distance < -kRestartDistance) {  // rule 4
    ++stats_.restarts;
    flush(out);
    next_ = sequence;
    distance = 0;
  }
  if (distance < 0) {
    ++stats_.late;
    return;
  }
  // Too far ahead: what is in the way leaves or is given up until it fits (rule 2).
  while (static_cast<size_t>(distance) >= slots_.size()) {
    skip_one(out);
    --distance;
  }
  Slot& s = slot(sequence);
  if (s.used) {
    ++stats_.duplicates;
    return;
  }
  s = Slot{true, sequence, now_ms, std::move(bytes)};
  ++held_;
  release_run(out);
}

std::optional<int64_t> ReorderBuffer::deadline() const {
  if (held_ == 0) return std::nullopt;
  int64_t oldest = INT64_MAX;
  for (const auto& s : slots_) {
    if (s.used) oldest = std::min(oldest, s.arrived);
  }
  return oldest + limits_.max_wait_ms;
}

void ReorderBuffer::poll(int64_t now_ms, std::vector<Packet>& out) {
  while (held_ > 0) {
    const auto due = deadline();
    if (!due || *due > now_ms) return;
    // The head is missing (else it would have left): give it up, and the gap after it.
    do skip_one(out);
    while (held_ > 0 && !(slot(next_).used && slot(next_).sequence == next_));
    release_run(out);
  }
}

void ReorderBuffer::flush(std::vector<Packet>& out) {
  while (held_ > 0) {
    if (slot(next_).used && slot(next_).sequence == next_) {
      release_run(out);
    } else {
      skip_one(out);
    }
  }
}

}  // namespace sluice::media::rtp
