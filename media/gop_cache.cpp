#include "media/gop_cache.hpp"

namespace sluice::media {

void GopCache::push(const FramePtr& f) {
  if (f->sequence_header || f->metadata) return;  // rule 5
  if (f->kind == FrameKind::Video && !video_seen_) {
    // The stream was audio-only so far: its window is no use as a GOP start.
    video_seen_ = true;
    drop_until_keyframe();
  }
  if (video_seen_) {
    push_with_video(f);
  } else {
    push_audio_only(f);
  }
}

void GopCache::push_audio_only(const FramePtr& f) {
  if (limits_.audio_only_frames == 0) return;
  append(f);
  // Erasing at the front of a small vector: a few pointer moves, and no allocation.
  size_t excess = 0;
  uint64_t bytes = bytes_;
  while (excess < frames_.size() &&
         (frames_.size() - excess > limits_.audio_only_frames || bytes > limits_.max_bytes)) {
    bytes -= frames_[excess]->payload.size();
    ++excess;
  }
  if (excess) {
    frames_.erase(frames_.begin(), frames_.begin() + static_cast<std::ptrdiff_t>(excess));
    bytes_ = bytes;
  }
}

void GopCache::push_with_video(const FramePtr& f) {
  if (f->kind == FrameKind::Video && f->keyframe && f->track == 0) {
    drop_frames();
    waiting_keyframe_ = false;
  }
  if (waiting_keyframe_) return;
  append(f);
  if (frames_.size() > limits_.max_frames || bytes_ > limits_.max_bytes) drop_until_keyframe();
}

void GopCache::append(const FramePtr& f) {
  frames_.push_back(f);
  bytes_ += f->payload.size();
}

void GopCache::drop_frames() {
  frames_.clear();
  bytes_ = 0;
}

void GopCache::drop_until_keyframe() {
  drop_frames();
  waiting_keyframe_ = true;
}

void GopCache::clear() {
  drop_frames();
  video_seen_ = false;
  waiting_keyframe_ = true;
}

}  // namespace sluice::media
