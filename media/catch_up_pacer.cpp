#include "media/catch_up_pacer.hpp"

namespace sluice::media {

void CatchUpPacer::sent(uint32_t timestamp, uint64_t now_ms) {
  if (done_) return;
  if (!started_) {
    started_ = true;
    first_ts_ = timestamp;
    start_ms_ = now_ms;
  }
  // Modular milliseconds (an RTMP timeline wraps). A frame a little behind the first is the start
  // instead: the first frame handed over may be audio stamped after the keyframe (a muxer holds
  // a video frame until the next one), and the media is measured from the earliest.
  const auto ahead = static_cast<int32_t>(timestamp - first_ts_);
  if (ahead < 0 && ahead >= -kJumpMs) {
    first_ts_ = timestamp;
    ahead_ms_ -= ahead;
    return;
  }
  if (ahead > ahead_ms_ + kJumpMs) {
    done_ = true;
    return;
  }
  if (ahead > ahead_ms_) ahead_ms_ = ahead;
}

uint64_t CatchUpPacer::wait_ms(uint64_t now_ms) const {
  if (done_ || !started_) return 0;
  const uint64_t allowed = kLeadMs + kSpeed * (now_ms - start_ms_);
  const auto ahead = static_cast<uint64_t>(ahead_ms_);
  if (ahead <= allowed) return 0;
  return (ahead - allowed + kSpeed - 1) / kSpeed;
}

}  // namespace sluice::media
