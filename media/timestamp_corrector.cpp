#include "media/timestamp_corrector.hpp"

#include <algorithm>

namespace sluice::media {

namespace {
// Serial-number difference: timestamps wrap at 2^32 (rule 1).
int32_t step(uint32_t from, uint32_t to) { return static_cast<int32_t>(to - from); }
}  // namespace

bool TimestampCorrector::beyond(const Previous& p, uint32_t timestamp) const {
  if (!p.seen) return true;  // nothing to compare with: the other comparison decides
  const int64_t d = step(p.timestamp, timestamp);
  return d > threshold_ms_ || d < -static_cast<int64_t>(threshold_ms_);
}

void TimestampCorrector::note_output(uint32_t out) {
  if (step(latest_out_, out) > 0) latest_out_ = out;
}

uint32_t TimestampCorrector::correct(FrameKind kind, uint32_t timestamp, std::optional<Jump>* jump) {
  before_handover_ = false;
  if (kind == FrameKind::Data) {
    // Rule 5: a data message follows the media's offset unless it is out of line itself.
    if (!any_.seen) return continuing_ ? latest_out_ : timestamp;
    return beyond(any_, timestamp) ? latest_out_ : timestamp + kinds_[any_.kind].offset;
  }
  const size_t k = kind == FrameKind::Audio ? 0 : 1;
  KindState& own = kinds_[k];
  if (!any_.seen && continuing_) {
    own.offset = latest_out_ - timestamp;  // at the handover point of the publication it continues
    kinds_[1 - k].offset = own.offset;
  } else if (!any_.seen) {
    latest_out_ = timestamp;  // rule 6
  } else {
    const bool off_stream = beyond(any_, timestamp);
    const bool off_own = beyond(own.previous, timestamp);
    // A kind's first message has nothing of its own to agree with: it may start skewed against the
    // other kind, so it takes that kind's offset rather than count as a jump.
    if (off_stream && off_own && own.previous.seen) {
      const uint32_t out = latest_out_ + kStepMs;  // rule 4
      if (jump) *jump = Jump{kind, any_.timestamp, timestamp, step(any_.timestamp, timestamp), out};
      own.offset = out - timestamp;
      ++jumps_;
    } else if (off_own) {
      own.offset = kinds_[any_.kind].offset;  // rule 2: back on the clock of the other kind
    }
  }
  any_ = own.previous = Previous{true, timestamp, k};
  const uint32_t out = timestamp + own.offset;
  before_handover_ = before_handover_check_[k] && step(handover_at_, out) < 0;
  if (!before_handover_) before_handover_check_[k] = false;
  note_output(out);
  if (kind == FrameKind::Video) {
    if (video_seen_ && step(last_video_out_, out) > 0) video_step_ = out - last_video_out_;
    last_video_out_ = out;
    video_seen_ = true;
  }
  return out;
}

uint32_t TimestampCorrector::handover_point() const {
  if (!video_seen_) return latest_out_ + kStepMs;
  // The next frame time on the video's cadence that is past everything handed out: a player that
  // estimates the frame rate from the timestamps sees no odd step (ffmpeg read 24.9 fps after a
  // 53 ms one and wrote two frames at one tick).
  const uint32_t interval = std::clamp<uint32_t>(video_step_, kStepMs, threshold_ms_);
  uint32_t at = last_video_out_ + interval;
  for (int i = 0; i < 1000 && step(latest_out_, at) <= 0; ++i) at += interval;
  return at;
}

}  // namespace sluice::media
