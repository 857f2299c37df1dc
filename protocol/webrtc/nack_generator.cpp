#include "protocol/webrtc/nack_generator.hpp"

namespace sluice::protocol::webrtc {

void NackGenerator::on_packet(uint16_t sequence, int64_t now_ms) {
  ++stats_.received;
  if (!started_) {
    started_ = true;
    highest_ = sequence;
    return;
  }
  // The extended number nearest the highest one (docs/rtp.md, "Wrap").
  const int16_t step = static_cast<int16_t>(static_cast<uint16_t>(sequence - static_cast<uint16_t>(highest_)));
  const int64_t ext = highest_ + step;
  if (step <= 0) {  // late or retransmitted (rule 3), or a duplicate
    if (missing_.erase(ext) > 0) ++stats_.recovered;
    return;
  }
  if (static_cast<size_t>(step) > limits_.max_missing) {  // rule 2: a new start
    stats_.given_up += missing_.size();
    missing_.clear();
    highest_ = ext;
    return;
  }
  for (int64_t s = highest_ + 1; s < ext; ++s) {
    missing_[s] = Missing{now_ms + limits_.reorder_delay_ms, 0};
    ++stats_.missing;
  }
  highest_ = ext;
  while (missing_.size() > limits_.max_missing) {
    missing_.erase(missing_.begin());
    ++stats_.given_up;
  }
}

void NackGenerator::poll(int64_t now_ms, std::vector<uint16_t>& out) {
  for (auto it = missing_.begin(); it != missing_.end();) {
    Missing& m = it->second;
    if (m.due > now_ms) {
      ++it;
      continue;
    }
    if (m.tries >= limits_.max_tries) {
      it = missing_.erase(it);
      ++stats_.given_up;
      continue;
    }
    out.push_back(static_cast<uint16_t>(it->first));
    ++m.tries;
    ++stats_.requests;
    m.due = now_ms + retry_interval();
    ++it;
  }
}

std::optional<int64_t> NackGenerator::deadline() const {
  std::optional<int64_t> due;
  for (const auto& [seq, m] : missing_) {
    if (!due || m.due < *due) due = m.due;
  }
  return due;
}

}  // namespace sluice::protocol::webrtc
