// TimestampCorrector: one publication's timestamps made continuous at ingest, once per message,
// before the hub, its GOP cache and the players' queues see them (SRS's time_jitter in spirit).
//
// Encoders jump their clock after a reconnect to their source or a source loop: +60 s, or back to
// 0, in the middle of a GOP. Passed on, a jump reads as backlog to every queue that measures media
// time (a late joiner replayed a GOP that spans the jump would be closed as a slow player) and
// makes players stall or drop. Rules:
//  1. Only the RTMP timestamp (the decode time) is looked at; the composition offset of B-frames
//     lives in the payload and is not touched. Timestamps are modular 32-bit: a wrap past
//     0xFFFFFFFF is an ordinary step.
//  2. Each message is compared with the stream's previous audio or video message and with the
//     previous message of its own kind; a step is "beyond" when it is more than the threshold
//     forward or back. Beyond both is a jump. Beyond only the stream's previous is the other
//     kind running on another clock (a muxer's constant skew, or the other kind already jumped):
//     the message keeps its kind's offset. Beyond only its own kind's previous is a gap in that
//     kind (audio resuming; or it now follows a jump the other kind made): it takes the offset of
//     the kind it now agrees with. So the two kinds share one offset once both are on the new
//     clock, and keep their sync. A kind's first message is never a jump (it takes the other
//     kind's offset): it has no clock of its own to compare with yet.
//  3. So a stream whose messages really are further apart than the threshold (a paused source)
//     is closed up too, like SRS's "full" time_jitter: the threshold (apps.<live>.timestamp_jump)
//     is what tells a pause from a jump.
//  4. On a jump, the offset is set so that this message comes kStepMs after the latest time
//     already handed out: time keeps rising for both kinds.
//  5. Data messages (metadata, cue points) never cause a jump: they get the offset, or, when they
//     are themselves out of line (onMetaData sent again with timestamp 0), the latest time.
//  6. The first message keeps its timestamp: a publication is not rebased to 0 (players rebase a
//     new publication themselves, server/rtmp/live_player.hpp). Unless it continues another one
//     (continue_after: a publisher that took the name over): then it goes on after that one's time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "media/frame.hpp"

namespace sluice::media {

class TimestampCorrector {
 public:
  // What the next message after a jump is placed behind the latest time handed out (rule 4).
  static constexpr uint32_t kStepMs = 10;

  struct Jump {
    FrameKind kind;
    uint32_t from;    // the previous audio/video message's timestamp, as the publisher sent it
    uint32_t to;      // this message's timestamp, as the publisher sent it
    int64_t step_ms;  // to - from (modular): how far the clock jumped
    uint32_t output;  // the timestamp this message goes out with
  };

  // threshold_ms: rule 2. 0 is treated as 1 (a corrector that never corrects is not an option: the
  // queues' media-time measure relies on it).
  explicit TimestampCorrector(uint32_t threshold_ms) : threshold_ms_(threshold_ms ? threshold_ms : 1) {}

  // The timestamp to publish the message with; `jump` is set when this message was a jump (for
  // counting and logging).
  uint32_t correct(FrameKind kind, uint32_t timestamp, std::optional<Jump>* jump = nullptr);

  uint64_t jumps() const { return jumps_; }
  // The highest timestamp handed out so far.
  uint32_t latest_out() const { return latest_out_; }
  // Where a publication that takes over from this one should begin (a publisher taking the name
  // over, docs/live.md "A second publisher"): the next time on the video's cadence (its last
  // frame plus the last frame interval, at least kStepMs, at most the threshold, again as often as
  // needed) past the latest time handed out; kStepMs after it for audio only. A step of kStepMs
  // put the new first frame inside the old last frame's interval, and any step off the cadence
  // made players that estimate the frame rate from the timestamps (ffmpeg) misplace frames.
  uint32_t handover_point() const;
  // Before the first message: this publication continues another one, from its handover_point().
  // Its first audio or video message goes out at `at`, both kinds on that offset; data before it too.
  void continue_after(uint32_t at) {
    latest_out_ = at;
    handover_at_ = at;
    continuing_ = true;
    before_handover_check_[0] = before_handover_check_[1] = true;
  }
  // The message just corrected went out before the handover point: in a continuing publication, a
  // kind stamped earlier than the message that set the offset (a muxer's audio ahead of its first
  // video) lands in time the publication taken over already covered, and going on from there
  // would take that kind's timeline back. Checked until the kind reaches the point, then never
  // again (a modular clock running for weeks must not trip it).
  bool before_handover() const { return before_handover_; }
  uint32_t handover_at() const { return handover_at_; }

 private:
  struct Previous {
    bool seen = false;
    uint32_t timestamp = 0;  // as sent
    size_t kind = 0;         // index into kinds_
  };
  struct KindState {
    Previous previous;
    uint32_t offset = 0;  // added to this kind's timestamps (modular)
  };
  bool beyond(const Previous& p, uint32_t timestamp) const;
  void note_output(uint32_t out);

  uint32_t threshold_ms_;
  Previous any_;             // the previous audio or video message
  KindState kinds_[2];       // audio, video
  uint32_t latest_out_ = 0;  // the highest (modular) timestamp handed out so far
  uint64_t jumps_ = 0;
  bool continuing_ = false;  // continue_after() was called
  uint32_t handover_at_ = 0;
  bool before_handover_check_[2] = {false, false};  // audio, video: not yet at the handover point
  bool before_handover_ = false;                    // of the last message corrected
  uint32_t last_video_out_ = 0;
  uint32_t video_step_ = 0;  // between the last two video messages out (0: fewer than two)
  bool video_seen_ = false;
};

}  // namespace sluice::media
