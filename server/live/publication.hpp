// Publication: the protocol-neutral half of a publisher, what every ingest (an RTMP publish, a
// relay or cluster pull, and the protocols to come: docs/architecture.md, "Adding a protocol")
// does to feed a stream's hub. Made when the source's media begins, it starts the hub's
// publication; it takes the source's frames in the canonical form (media/frame.hpp: an FLV tag's
// type and payload, a millisecond timestamp), keeps "@setDataFrame onMetaData" as "onMetaData",
// makes the timestamps continuous (media/timestamp_corrector.hpp: a jump of the source's clock
// never reaches the GOP cache or a player's queue), counts, and ends the publication when
// destroyed. The payloads are never copied.
//
// What stays with the protocol: claiming the name (StreamRegistry::claim_publisher) and the access
// check before, the frames' conversion into the canonical form, and what else a publish starts
// (relays, HLS, recording, the cluster's claim: server/ingest/live_publisher.cpp).
#pragma once

#include <cstdint>
#include <optional>

#include "base/bytes.hpp"
#include "media/frame.hpp"
#include "media/timestamp_corrector.hpp"

namespace sluice::media {
class StreamHub;
}

namespace sluice::server {

class Publication {
 public:
  // timestamp_jump_ms: the app's timestamp_jump (config/config.hpp). continue_after: this
  // publication takes over from another that ended quietly (end_quietly() gave this point): the
  // hub's publication goes on (its players are not told of an end, only of a new start) and the
  // timestamps go on from there (docs/live.md, "A second publisher").
  Publication(media::StreamHub& hub, uint32_t timestamp_jump_ms, std::optional<uint32_t> continue_after = {});
  ~Publication();
  Publication(const Publication&) = delete;
  Publication& operator=(const Publication&) = delete;

  // One frame of the source: its FLV tag type (8 audio, 9 video, 18 data), its timestamp as the
  // source stamped it, its payload, and when it arrived (the loop's ms clock, for the stream's
  // health: media/stream_health.hpp). Returns the frame the hub got, or nullptr for one left out
  // (a taker's audio from before the handover point); `jump` is set when the source's clock
  // jumped (counted here; the caller logs it with its own fields).
  media::FramePtr publish(uint8_t type, uint32_t timestamp, Slice payload, uint64_t now_ms,
                          std::optional<media::TimestampCorrector::Jump>& jump);

  // A new publisher takes over: the hub's publication is not ended when this one goes (the
  // taker's continues it). Returns where the taker's timestamps begin, for its continue_after.
  uint32_t end_quietly() {
    quiet_end_ = true;
    return timestamps_.handover_point();
  }

  media::StreamHub& hub() const { return hub_; }
  uint64_t frames() const { return frames_; }
  uint64_t bytes() const { return bytes_; }
  uint64_t timestamp_jumps() const { return timestamps_.jumps(); }

 private:
  media::StreamHub& hub_;
  media::TimestampCorrector timestamps_;
  uint64_t frames_ = 0;
  uint64_t bytes_ = 0;
  bool quiet_end_ = false;
};

}  // namespace sluice::server
