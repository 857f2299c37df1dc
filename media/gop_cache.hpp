// GopCache: the frames a late joiner needs after metadata and sequence headers so that it starts
// on a key frame at once (SRS SrsGopCache, nginx-rtmp's "start on keyframe").
//
// Rules:
//  1. A coded key frame of the default video track (track 0) starts a new GOP: the previous one
//     is dropped. Frames of other tracks ride along in arrival order.
//  2. Until the first key frame after video appears, nothing is cached (it could not be decoded).
//  3. Over max_frames or max_bytes the cache is dropped and stays empty until the next key frame,
//     so one pathological GOP (a stream with no key frames) cannot hold memory forever.
//  4. Audio-only streams (no video frame seen since clear()): the last audio_only_frames frames
//     are kept as a sliding window, so a new listener's buffer fills at once. 0 disables this,
//     which is SRS's choice. Once video shows up, rule 2 applies.
//  5. Sequence headers and metadata never go in here: the hub keeps them separately.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "media/frame.hpp"

namespace sluice::media {

class GopCache {
 public:
  struct Limits {
    uint32_t max_frames = 2000;
    uint64_t max_bytes = uint64_t{64} << 20;
    uint32_t audio_only_frames = 64;  // about 1.5 s of 44.1 kHz AAC
  };

  explicit GopCache(Limits limits) : limits_(limits) {}

  void push(const FramePtr& f);
  // Forgets everything, including that video was seen (a new publish session).
  void clear();
  // Drops the cached frames and caches nothing until the next key frame (a codec change).
  void drop_until_keyframe();

  // In arrival order, starting at a key frame when video is present.
  const std::vector<FramePtr>& frames() const { return frames_; }
  size_t frame_count() const { return frames_.size(); }
  uint64_t bytes() const { return bytes_; }
  bool video_seen() const { return video_seen_; }

 private:
  void push_audio_only(const FramePtr& f);
  void push_with_video(const FramePtr& f);
  void append(const FramePtr& f);
  void drop_frames();

  Limits limits_;
  // A vector rather than a deque: cleared at each key frame, it keeps its capacity, so steady
  // state costs no allocation.
  std::vector<FramePtr> frames_;
  uint64_t bytes_ = 0;
  bool video_seen_ = false;
  bool waiting_keyframe_ = true;
};

}  // namespace sluice::media
