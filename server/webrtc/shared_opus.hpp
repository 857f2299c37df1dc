// SharedOpus: one AAC -> Opus bridge per stream and loop, for all its WHEP players (docs/webrtc.md,
// "Playing"). Every player of a stream sees the same AAC frames (the hub's, shared), in the same
// order, each at its own moment: the first player to reach a frame has it transcoded (the encoder
// is stateful: each frame once, in order) and the Opus packets it gave are kept with it for the
// others. A player behind the kept window (a join replaying an old GOP, a slow player) gets no
// audio for those frames and picks up where the window starts; frames older than the newest
// transcoded one that are not kept are never transcoded again.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "media/frame.hpp"
#include "server/webrtc/aac_to_opus.hpp"

namespace sluice::server {

class SharedOpus {
 public:
  // About 6 s of 1024-sample AAC at 44.1 kHz: a GOP cache's audio fits.
  static constexpr size_t kKeptFrames = 256;

  SharedOpus();
  ~SharedOpus();

  // The Opus packets of an AAC frame of the stream (none for a sequence header, or for a frame
  // behind the window); valid until the next call.
  const std::vector<media::FramePtr>& opus_of(const media::Frame& aac);
  uint64_t transcoded() const { return transcoded_; }
  uint64_t missed() const { return missed_; }

 private:
  // A frame is known by its address, timestamp and size: the hub's frames are shared, and a
  // kept entry outlives its frame by a few seconds at most, so a new frame at a freed frame's
  // address with the same timestamp and size is not a case that occurs.
  struct Kept {
    const media::Frame* aac;
    uint32_t timestamp;
    size_t size;
    std::vector<media::FramePtr> opus;
  };
  AacToOpus bridge_;
  std::deque<Kept> kept_;
  std::vector<media::FramePtr> none_;
  uint64_t transcoded_ = 0;
  uint64_t missed_ = 0;
};

}  // namespace sluice::server
