// StreamHub: one live stream, one publisher to N subscribers, on the loop that owns the stream.
//
// Lifecycle and rules:
//  1. start_publish() begins a publish session; publish() is then called once per ingested
//     frame; end_publish() ends it. Frames published with no session active are ignored.
//  2. publish() updates the caches (metadata, sequence headers per kind and track, GOP), then
//     calls on_frame() on every subscriber with the same FramePtr. Nothing is copied or allocated
//     per subscriber here: each one gets a reference to the shared frame.
//  3. add_subscriber() on a live stream replays, through on_frame(): metadata, the video sequence
//     headers, the audio sequence headers, then the GOP cache from its key frame. It does not
//     call on_publish_start(); has_publisher() tells whether the stream is live.
//  4. Subscribers may call remove_subscriber() (for themselves or others) and add_subscriber()
//     from inside any callback. They must not call publish(), start_publish() or end_publish()
//     from a callback.
//  5. end_publish() drops all caches (the next publisher may use other codecs) and calls
//     on_publish_end(); subscribers stay attached and wait for the next start_publish().
//     start_publish() while already publishing is a republish: caches are dropped too.
//  6. A sequence header whose bytes differ from the cached one for its kind and track also drops
//     the GOP cache until the next key frame: frames of the old GOP were coded against the old
//     configuration, and a late joiner would be handed the new one first.
//  7. Timestamps are not rebased here: they arrive continuous (the publisher side closes up jumps of
//     its clock with a TimestampCorrector, media/timestamp_corrector.hpp) and each player keeps its
//     own timeline across publications.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "media/codec_info.hpp"
#include "media/frame.hpp"
#include "media/gop_cache.hpp"
#include "media/stream_health.hpp"
#include "media/subscriber.hpp"

namespace sluice::media {

class StreamHub {
 public:
  struct Options {
    bool gop_cache = true;
    uint32_t gop_max_frames = 2000;
    uint64_t gop_max_bytes = uint64_t{64} << 20;
    uint32_t audio_only_frames = 64;  // GopCache rule 4; 0 = cache nothing for audio-only streams
  };

  struct Stats {
    uint64_t frames_in = 0;
    uint64_t bytes_in = 0;
    uint64_t video_frames_in = 0;
    uint64_t audio_frames_in = 0;
    uint64_t data_frames_in = 0;
    uint64_t keyframes_in = 0;
    uint64_t publish_sessions = 0;
  };

  explicit StreamHub(std::string name);
  StreamHub(std::string name, Options options);
  StreamHub(const StreamHub&) = delete;
  StreamHub& operator=(const StreamHub&) = delete;

  const std::string& name() const { return name_; }

  bool has_publisher() const { return publishing_; }
  void start_publish();
  void end_publish();
  // The publication goes on under a new publisher (a takeover, docs/live.md): what the caches hold
  // is the old one's and must not be replayed to anyone who joins before the new one's first frames
  // (a worker's forwarder set up by the new claim, a player). Subscribers are not told.
  void forget_caches() { clear_caches(); }
  void publish(FramePtr f);

  void add_subscriber(Subscriber* s);
  void remove_subscriber(Subscriber* s);
  size_t subscriber_count() const { return subscribers_.size() - vacant_; }

  const CodecInfo& info() const { return info_; }
  // What the publisher really sends, fed by the owning loop's publication (server/live/publication.hpp);
  // kept across publications (it counts them).
  StreamHealth& health() { return health_; }
  const StreamHealth& health() const { return health_; }
  const Stats& stats() const { return stats_; }
  uint64_t frames_in() const { return stats_.frames_in; }
  uint64_t bytes_in() const { return stats_.bytes_in; }
  size_t gop_frames() const { return gop_.frame_count(); }
  uint64_t gop_bytes() const { return gop_.bytes(); }
  const FramePtr& metadata() const { return metadata_; }
  const std::vector<FramePtr>& sequence_headers() const { return sequence_headers_; }

 private:
  void update_caches(const FramePtr& f);
  void remember_sequence_header(const FramePtr& f);
  void clear_caches();
  void replay_to(Subscriber* s);
  bool replay_frame(Subscriber* s, const FramePtr& f);
  bool is_subscribed(const Subscriber* s) const;
  template <typename Fn>
  void for_each_subscriber(Fn&& fn);
  void compact();

  std::string name_;
  Options options_;
  bool publishing_ = false;

  // Removal during a fan-out only blanks the slot (vacant_ counts them); the vector is compacted
  // when no loop over it is running, so iteration by index never skips or repeats anyone.
  std::vector<Subscriber*> subscribers_;
  size_t vacant_ = 0;
  int iterating_ = 0;
  uint64_t removals_ = 0;  // lets a replay notice, cheaply, that its subscriber left

  FramePtr metadata_;
  std::vector<FramePtr> sequence_headers_;  // at most one per (kind, track), in arrival order
  GopCache gop_;
  CodecInfo info_;
  StreamHealth health_;
  Stats stats_;
};

}  // namespace sluice::media
