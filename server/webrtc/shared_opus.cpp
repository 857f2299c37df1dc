#include "server/webrtc/shared_opus.hpp"

namespace sluice::server {

SharedOpus::SharedOpus() = default;
SharedOpus::~SharedOpus() = default;

const std::vector<media::FramePtr>& SharedOpus::opus_of(const media::Frame& aac) {
  // Newest first: players are mostly at the live edge.
  for (auto it = kept_.rbegin(); it != kept_.rend(); ++it) {
    if (it->aac == &aac && it->timestamp == aac.timestamp && it->size == aac.payload.size()) return it->opus;
  }
  // Not kept: a frame past the newest transcoded one (this player is the first to reach it), or
  // one behind the window. Timestamps tell which (modular ms).
  if (!kept_.empty() && static_cast<int32_t>(aac.timestamp - kept_.back().timestamp) < 0) {
    ++missed_;
    return none_;
  }
  Kept k{&aac, aac.timestamp, aac.payload.size(), {}};
  bridge_.push(aac, k.opus);
  ++transcoded_;
  kept_.push_back(std::move(k));
  if (kept_.size() > kKeptFrames) kept_.pop_front();
  return kept_.back().opus;
}

}  // namespace sluice::server
