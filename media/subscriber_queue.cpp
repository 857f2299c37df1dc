#include "media/subscriber_queue.hpp"

namespace sluice::media {

namespace {

constexpr size_t kInitialRing = 64;

size_t track_index(uint32_t track) { return track < 256 ? track : 255; }

}  // namespace

SubscriberQueue::PushResult SubscriberQueue::push(FramePtr f, uint64_t extra_pending_bytes) {
  if (overflowed_) return PushResult::Overflow;
  if (!f) return PushResult::Dropped;
  const uint64_t size = f->payload.size();
  const uint64_t pending = bytes_ + extra_pending_bytes;
  const uint32_t span = span_to(f->timestamp);
  if (over_hard(pending, size, span)) {
    overflowed_ = true;
    return PushResult::Overflow;
  }
  if (should_drop(*f, over_soft(pending, size, span))) {
    ++dropped_frames_;
    dropped_bytes_ += size;
    return PushResult::Dropped;
  }
  if (count_ == ring_.size()) grow();
  slot(count_) = std::move(f);
  ++count_;
  bytes_ += size;
  newest_ts_ = slot(count_ - 1)->timestamp;
  return PushResult::Queued;
}

bool SubscriberQueue::should_drop(const Frame& f, bool above_soft) {
  if (f.kind == FrameKind::Data) return above_soft && !f.metadata;
  if (f.kind != FrameKind::Video || f.sequence_header) return false;  // audio, codec config
  const size_t track = track_index(f.track);
  if (f.keyframe) {
    waiting_keyframe_.reset(track);
    return false;
  }
  if (waiting_keyframe_.test(track) || above_soft) {
    waiting_keyframe_.set(track);
    return true;
  }
  return false;
}

// Timestamps wrap: the serial-number difference, clamped at 0 for frames that go backwards
// (audio and video interleave a few ms out of order). The span starts at the oldest queued media
// frame: metadata and sequence headers replayed to a late joiner carry the publication's first
// timestamps (often 0), which say nothing about how far behind the player is.
uint32_t SubscriberQueue::span_to(uint32_t newest) const {
  for (size_t i = 0; i < count_ && i < kSpanScanFrames; ++i) {
    const Frame& f = *slot(i);
    if (f.kind == FrameKind::Data || f.sequence_header) continue;
    const int32_t d = static_cast<int32_t>(newest - f.timestamp);
    return d > 0 ? static_cast<uint32_t>(d) : 0;
  }
  return 0;
}

uint32_t SubscriberQueue::span_ms() const { return span_to(newest_ts_); }

bool SubscriberQueue::over_hard(uint64_t pending, uint64_t size, uint32_t span) const {
  if (pending == 0) return false;  // rule 1: never refuse a frame on its own
  return (limits_.hard_bytes && pending + size > limits_.hard_bytes) || (limits_.hard_ms && span > limits_.hard_ms);
}

bool SubscriberQueue::over_soft(uint64_t pending, uint64_t size, uint32_t span) const {
  return (limits_.soft_bytes && pending + size > limits_.soft_bytes) || (limits_.soft_ms && span > limits_.soft_ms);
}

void SubscriberQueue::pop_batch(std::vector<FramePtr>& out, size_t max_frames, uint64_t max_bytes) {
  size_t taken = 0;
  uint64_t taken_bytes = 0;
  while (count_ > 0 && taken < max_frames) {
    FramePtr& front = slot(0);
    const uint64_t size = front->payload.size();
    if (taken > 0 && taken_bytes + size > max_bytes) break;
    out.push_back(std::move(front));
    head_ = (head_ + 1) & (ring_.size() - 1);
    --count_;
    bytes_ -= size;
    taken_bytes += size;
    ++taken;
  }
}

void SubscriberQueue::clear() {
  for (size_t i = 0; i < count_; ++i) slot(i).reset();
  head_ = 0;
  count_ = 0;
  bytes_ = 0;
}

void SubscriberQueue::grow() {
  std::vector<FramePtr> bigger(ring_.empty() ? kInitialRing : ring_.size() * 2);
  for (size_t i = 0; i < count_; ++i) bigger[i] = std::move(slot(i));
  ring_.swap(bigger);
  head_ = 0;
}

}  // namespace sluice::media
