// SubscriberQueue: the bounded queue between the hub and one subscriber's socket, with the drop
// policy (docs/architecture.md, "Slow players").
//
// Backpressure counts both what is queued here and what was already handed to the socket but not
// yet written (extra_pending_bytes, e.g. uv_stream_get_write_queue_size()), in bytes, and the
// timestamp span from the oldest queued frame to the newest one, in ms. The span is only backlog
// because the timestamps are continuous: jumps of the publisher's clock are closed up at ingest
// (media/timestamp_corrector.hpp).
//  1. Above a hard limit: push() returns Overflow and the caller disconnects the subscriber.
//     Overflow is sticky. A frame is never refused on its own, only on top of a non-empty backlog,
//     so one oversized key frame cannot trip the limit.
//  2. Above a soft limit: video inter frames and data messages that are not metadata are dropped.
//     Audio, sequence headers, metadata and key frames are never dropped (nginx's "mandatory"
//     frames, SRS's shrink()).
//  3. Once a track has lost an inter frame, its later inter frames are useless to the decoder:
//     they are dropped until that track's next key frame, even if the queue has drained.
//  4. A limit of 0 is disabled.
#pragma once

#include <bitset>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "media/frame.hpp"

namespace sluice::media {

// A player with this much queued goes out at once instead of waiting for the write hold: the
// write is large enough to be cheap already, and the hold would only add latency.
inline constexpr size_t kWriteNowBytes = 64 * 1024;

class SubscriberQueue {
 public:
  struct Limits {
    uint64_t soft_bytes = 0;
    uint64_t hard_bytes = 0;
    uint32_t soft_ms = 0;
    uint32_t hard_ms = 0;
  };
  enum class PushResult : uint8_t { Queued, Dropped, Overflow };

  explicit SubscriberQueue(Limits limits) : limits_(limits) {}

  PushResult push(FramePtr f, uint64_t extra_pending_bytes = 0);

  bool empty() const { return count_ == 0; }
  size_t size() const { return count_; }
  uint64_t bytes() const { return bytes_; }
  // Timestamp span of the queue: newest pushed minus oldest queued, in ms (0 when empty).
  uint32_t span_ms() const;

  // Appends up to max_frames frames totalling at most max_bytes to `out`, oldest first, for one
  // batched write. At least one frame is taken when the queue is not empty, whatever its size.
  void pop_batch(std::vector<FramePtr>& out, size_t max_frames, uint64_t max_bytes);
  void clear();

  uint64_t dropped_frames() const { return dropped_frames_; }
  uint64_t dropped_bytes() const { return dropped_bytes_; }
  bool overflowed() const { return overflowed_; }

 private:
  static constexpr size_t kMaxTracks = 256;  // E-RTMP track ids are a u8
  // Leading non-media frames (metadata, sequence headers per track) skipped when measuring the span.
  static constexpr size_t kSpanScanFrames = 16;

  uint32_t span_to(uint32_t newest) const;
  bool over_hard(uint64_t pending, uint64_t size, uint32_t span) const;
  bool over_soft(uint64_t pending, uint64_t size, uint32_t span) const;
  bool should_drop(const Frame& f, bool above_soft);
  void grow();
  FramePtr& slot(size_t i) { return ring_[(head_ + i) & (ring_.size() - 1)]; }
  const FramePtr& slot(size_t i) const { return ring_[(head_ + i) & (ring_.size() - 1)]; }

  Limits limits_;
  // A power-of-two ring that only grows: steady-state pushes and pops never allocate, unlike a
  // std::deque, which allocates and frees blocks as it moves.
  std::vector<FramePtr> ring_;
  size_t head_ = 0;
  size_t count_ = 0;
  uint64_t bytes_ = 0;
  uint32_t newest_ts_ = 0;
  std::bitset<kMaxTracks> waiting_keyframe_;
  uint64_t dropped_frames_ = 0;
  uint64_t dropped_bytes_ = 0;
  bool overflowed_ = false;
};

}  // namespace sluice::media
