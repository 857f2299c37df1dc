#include "media/rtp/rtp_history.hpp"

#include <algorithm>

#include "media/rtp/rtp_sequence.hpp"

namespace sluice::media::rtp {

RtpHistory::RtpHistory(size_t capacity, uint16_t first_sequence) : next_(first_sequence) {
  // Power of two up to 32768, so that slot = sequence mod size stays right across the wrap.
  size_t size = 1;
  while (size < std::clamp<size_t>(capacity, 1, 32768)) size <<= 1;
  ring_.resize(size);
  used_.assign(size, false);
}

uint16_t RtpHistory::add(uint32_t timestamp, bool marker, Slice payload) {
  const uint16_t seq = next_++;
  const size_t at = seq & (ring_.size() - 1);
  ring_[at] = HistoryPacket{seq, timestamp, marker, std::move(payload)};
  used_[at] = true;
  return seq;
}

const HistoryPacket* RtpHistory::find(uint16_t sequence) const {
  const size_t at = sequence & (ring_.size() - 1);
  if (!used_[at] || ring_[at].sequence != sequence) return nullptr;
  // Numbered, and not so long ago that the number came round again.
  const int16_t age = seq_diff(static_cast<uint16_t>(next_ - 1), sequence);
  if (age < 0 || static_cast<size_t>(age) >= ring_.size()) return nullptr;
  return &ring_[at];
}

uint16_t SequenceRewriter::rewrite(uint16_t source) {
  if (!started_) {
    started_ = true;
    epochs_[0] = {0, static_cast<uint16_t>(first_ - source)};
    epoch_count_ = 1;
    last_source_ = source;
    last_player_ = first_;
    sent_ = 1;
    return first_;
  }
  const uint16_t player = static_cast<uint16_t>(last_player_ + 1);
  if (source != static_cast<uint16_t>(last_source_ + 1)) {
    skipped_ += static_cast<uint16_t>(source - last_source_ - 1);
    epochs_[epoch_count_ % kEpochs] = {sent_, static_cast<uint16_t>(player - source)};
    ++epoch_count_;
  }
  last_source_ = source;
  last_player_ = player;
  ++sent_;
  return player;
}

std::optional<uint16_t> SequenceRewriter::source_of(uint16_t player) const {
  if (!started_) return std::nullopt;
  const int age = seq_diff(last_player_, player);
  if (age < 0 || age >= kWindow || static_cast<uint64_t>(age) >= sent_) return std::nullopt;
  const uint64_t index = sent_ - 1 - static_cast<uint64_t>(age);
  const size_t kept = std::min(epoch_count_, kEpochs);
  for (size_t i = 0; i < kept; ++i) {  // newest first
    const Epoch& e = epochs_[(epoch_count_ - 1 - i) % kEpochs];
    if (index >= e.start) return static_cast<uint16_t>(player - e.offset);
  }
  return std::nullopt;
}

}  // namespace sluice::media::rtp
