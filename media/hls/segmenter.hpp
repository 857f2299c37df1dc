// Segmenter: cuts a live stream's samples into HLS segments and parts, held in memory, and writes
// them with a PartWriter (MPEG-TS or fMP4). Sans-I/O: samples and `now` in, immutable segments out;
// the server (server/hls/) serves them and renders playlists from them (playlist.hpp).
//
// Rules (docs/hls.md tells users the same):
//  1. The driving track is the video when there is one, else the audio. A segment starts at a
//     video keyframe: the first keyframe at or after the target duration ends the previous one
//     (so segments follow the GOP when it is longer than the target). Audio-only streams are cut
//     by time. Samples before the first keyframe are dropped: nothing could decode them.
//  2. Parts (part_ms > 0): a part ends before the driving sample that would take it past the part
//     target, and at every segment end; so no part is longer than the target unless one sample
//     is. A part is independent when it starts on a keyframe.
//  3. A sample's duration is the distance to the next one of its track, so each sample is held
//     until the next arrives. A cut at time T is written once the other track has reached T
//     (all its samples before T are known), or once the driving track is `follower_wait_ms`
//     past T (the other track stalls; its late samples go into the next part).
//  4. The target duration is the rounded-up longest segment seen (and at least the configured
//     target); it never goes down, so no EXTINF ever exceeds it.
//  5. Memory: `window` complete segments are listed, one more is kept for readers of an older
//     playlist, plus the segment being written. Older ones are dropped.
//  6. Timeline: a new publication (mark_discontinuity) is rebased to continue where the last one
//     ended, so times never go back, and its first segment carries a discontinuity. A different
//     track setup mid-stream ends the segment and starts a new one with a discontinuity and (fMP4)
//     a new initialization segment. Media sequence numbers only grow.
//  7. Program date-time: the wall clock when the first segment of a run was opened, plus media
//     time since.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "base/bytes.hpp"
#include "media/hls/part_writer.hpp"
#include "media/hls/sample.hpp"

namespace sluice::media::hls {

struct Part {
  Slice bytes;
  uint64_t start = 0;     // 90 kHz
  uint32_t duration = 0;  // 90 kHz
  bool independent = false;
};

struct Segment {
  uint64_t msn = 0;       // media sequence number
  uint64_t start = 0;     // 90 kHz
  uint64_t duration = 0;  // 90 kHz; while being written, that of its parts so far
  int64_t pdt_ms = 0;     // program date-time, ms since the epoch
  bool discontinuity = false;
  bool complete = false;
  uint32_t init_id = 0;  // which initialization segment it needs (fMP4)
  uint64_t bytes = 0;
  std::vector<Part> parts;
};

// A copy of s that shares its parts' bytes (snapshots of the segment list are made of these).
Segment clone(const Segment& s);

struct InitSegment {
  uint32_t id = 0;
  Slice bytes;
};

class Segmenter {
 public:
  struct Options {
    Container container = Container::Fmp4;
    uint32_t segment_ms = 2000;
    uint32_t part_ms = 0;  // 0: a segment is one part
    uint32_t window = 6;
    uint32_t follower_wait_ms = 1000;
  };

  explicit Segmenter(Options options);
  ~Segmenter();
  Segmenter(const Segmenter&) = delete;
  Segmenter& operator=(const Segmenter&) = delete;

  // The tracks to write (SampleSource::setup()). Rule 6 when it changes mid-stream.
  void set_setup(const StreamSetup& setup);
  // A sample of a track of the setup, without its duration; `keep` keeps its data alive.
  void push(const Sample& sample, Slice keep, int64_t now_ms);
  // The publisher left: the held samples go out and the segment ends.
  void finish();
  // The next samples are a new publication (rule 6). Before any output there is nothing to be
  // discontinuous with, so a muxer that starts on a live stream opens without a discontinuity.
  void mark_discontinuity();

  const Options& options() const { return options_; }
  const std::deque<Segment>& segments() const { return segments_; }
  const std::vector<InitSegment>& inits() const { return inits_; }
  // Grows with every part written: what a waiting reader compares.
  uint64_t version() const { return version_; }
  uint32_t target_duration_s() const { return target_s_; }
  // Discontinuities dropped from the front of the list (EXT-X-DISCONTINUITY-SEQUENCE).
  uint64_t discontinuity_sequence() const { return discontinuity_sequence_; }
  // Bytes of segment data held.
  uint64_t bytes_held() const { return bytes_held_; }
  uint32_t longest_part() const { return longest_part_; }

 private:
  struct Pending {
    Sample s;
    Slice keep;
  };
  struct Cut {
    uint64_t at = 0;
    bool ends_segment = false;
  };

  bool has_video() const { return setup_.video.present(); }
  int driver() const { return has_video() ? 0 : 1; }
  bool has_track(int t) const { return t == 0 ? setup_.video.present() : setup_.audio.present(); }
  void complete(int track, Pending p);
  void drive(Pending p);
  void emit_ready(bool force);
  void emit_part(const Cut& cut);
  void open_segment(uint64_t start, bool discontinuity);
  int64_t wall_ms_at(uint64_t dts) const;
  void trim();
  uint32_t default_duration(int track) const;
  bool has_content() const;

  Options options_;
  StreamSetup setup_;
  std::unique_ptr<PartWriter> writer_;
  std::vector<InitSegment> inits_;
  uint32_t init_id_ = 0;

  Pending held_[2];
  bool holding_[2] = {false, false};
  uint32_t last_duration_[2] = {0, 0};
  std::deque<Pending> queue_[2];
  std::deque<Cut> cuts_;

  bool started_ = false;  // a run of segments is open (past its first keyframe)
  uint64_t part_start_ = 0;
  bool part_independent_ = false;
  uint64_t open_segment_start_ = 0;  // of the segment the next driving sample joins
  uint64_t last_cut_ = 0;            // the start of the part the next driving sample joins
  uint64_t driver_dts_ = 0;

  bool discontinuity_next_ = false;
  bool rebase_pending_ = false;
  int64_t offset_ = 0;
  uint64_t last_end_ = 0;
  bool any_output_ = false;
  // Wall clock minus media time (ms), the smallest seen since the run began: a muxer joining a
  // live stream gets the cached GOP in one burst, so the newest replayed frame, not the first,
  // says when the media was live. It sets PROGRAM-DATE-TIME.
  static constexpr int64_t kNoWallOffset = INT64_MAX;
  int64_t wall_offset_ms_ = kNoWallOffset;
  int64_t now_ms_ = 0;

  std::deque<Segment> segments_;
  uint64_t next_msn_ = 0;
  uint64_t version_ = 0;
  uint32_t target_s_ = 1;
  uint64_t discontinuity_sequence_ = 0;
  uint64_t bytes_held_ = 0;
  uint32_t longest_part_ = 0;
};

}  // namespace sluice::media::hls
