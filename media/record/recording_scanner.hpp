// RecordingScanner: reads a live recording (`NAME.flv.part`) front to back, in chunks of any size,
// and reports which prefix of it is a valid FLV file and what finalize_plan.hpp needs to turn it
// into the final `NAME.flv` (docs/recording.md, "Recording files"). Sans-I/O: the caller reads the
// file and feeds the bytes; the scanner never holds the whole file. The framing is FlvReader's
// (media/flv/flv_reader.hpp), as for FlvParser; unlike FlvParser the scanner copies no tag body
// (only its first bytes, and the onMetaData one) and stops at the first tag that is not valid.
//
// A .part is what the recorder appends (media/flv/flv.hpp: write_flv_header(), then append_tag() per
// message): the FLV header and PreviousTagSize0, then whole tags (script 18, audio 8, video 9),
// each followed by its PreviousTagSize. A crash (kill -9, a full disk) leaves a last tag cut short,
// or zeros where the file system had not written the data yet.
//
// Rules:
//  1. A tag is valid when its header, body and PreviousTagSize are all present, its type is 8, 9
//     or 18 (not encrypted), and its PreviousTagSize is 11 + DataSize. The first tag that is not
//     ends the valid prefix; nothing after it is looked at (a recorder never skips bytes, so what
//     follows a broken tag cannot be trusted to be aligned on a tag).
//  2. Unlike the VOD indexer, PreviousTagSize is checked: it is what tells a torn or zero-filled
//     tail from data, and our own writer always gets it right.
//  3. The first onMetaData script tag is the publisher's metadata: its body is kept (up to
//     kMaxFlvMetadataBytes) so that the final file's onMetaData keeps its properties.
//  4. Video keyframes (legacy and Enhanced RTMP, not sequence headers) are listed with their tag
//     offset; one whose time goes back is left out, so the times ascend. Past
//     kMaxRecordedKeyframes the list is thinned to every 2nd, 4th... keyframe, which bounds memory
//     and keeps the final onMetaData below the 16 MiB a tag can hold.
// The summary is the same whatever the chunk sizes.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "media/flv/flv.hpp"
#include "media/flv/flv_reader.hpp"
#include "media/flv/flv_tag_head.hpp"
#include "media/sample.hpp"
#include "media/vod/flv_indexer.hpp"

namespace sluice::media::record {

// 500k keyframes are 4 days of a 2-keyframes-per-second stream; as AMF0 numbers they take 9 MB of
// the final onMetaData, which leaves room for the publisher's own properties (4 MiB at most).
inline constexpr uint32_t kMaxRecordedKeyframes = 500'000;

struct KeyframeRef {
  uint32_t timestamp_ms = 0;
  uint64_t tag_offset = 0;  // where the keyframe's tag header starts in the scanned file
};

// The first onMetaData tag of the recording.
struct RecordedMetadata {
  ByteRange tag;                 // tag header + body + PreviousTagSize
  std::vector<uint8_t> payload;  // the body ("onMetaData" + ECMA array); empty when too big
};

struct RecordingSummary {
  bool flv_header_ok = false;  // FLV header and PreviousTagSize0 are complete and valid
  uint64_t tags_offset = 0;    // where the first tag starts (DataOffset + 4)
  uint64_t valid_bytes = 0;    // header + every valid tag; 0 without a valid header
  uint64_t torn_bytes = 0;     // scanned size - valid_bytes
  uint64_t tag_count = 0;      // valid tags, the onMetaData one included
  std::optional<RecordedMetadata> metadata;
  std::vector<KeyframeRef> keyframes;  // ascending offsets and times, see rule 4
  uint32_t keyframe_stride = 1;        // 1: every keyframe is listed; 2^k once thinned
  bool has_audio = false;
  bool has_video = false;
  // Of the valid audio and video tags: the first one's timestamp and the largest (both 0 when
  // there is none).
  uint32_t first_timestamp_ms = 0;
  uint32_t last_timestamp_ms = 0;
  // Why the valid prefix ends before the end of the input ("torn tag at byte N", "PreviousTagSize
  // mismatch at byte N", "not an FLV file"...); empty when all of it is valid.
  std::string stop_reason;
};

class RecordingScanner {
 public:
  // The next bytes of the file, right after those fed before.
  void feed(std::span<const uint8_t> bytes);
  // The summary of everything fed so far. Can be called at any time (it treats the input as
  // ending there).
  RecordingSummary finish() const;

 private:
  void on_tag_header();
  void on_body(std::span<const uint8_t> bytes);
  void on_previous_tag_size();
  void classify_body_head();
  void commit_tag();
  void add_keyframe(uint32_t timestamp_ms, uint64_t tag_offset);
  void stop(std::string reason);

  FlvReader reader_;  // the framing; what follows is what the scan adds to it
  bool stopped_ = false;
  uint64_t pos_ = 0;          // bytes fed so far
  uint64_t unit_offset_ = 0;  // where the current tag starts

  // The tag being read.
  uint8_t body_head_[kFlvTagHeadBytes]{};  // the body bytes read_flv_tag_head() reads
  size_t body_head_len_ = 0;
  bool classified_ = false;
  bool tag_keyframe_ = false;
  bool tag_is_metadata_ = false;     // the first onMetaData tag
  bool capturing_metadata_ = false;  // its body is being copied into metadata_capture_
  std::vector<uint8_t> metadata_capture_;

  RecordingSummary summary_;
  uint64_t keyframes_seen_ = 0;    // keyframes that ascend in time, listed or thinned out
  uint32_t last_keyframe_ms_ = 0;  // time of the last of those
};

// Scans a whole recording held in memory (tests, tools, fuzzing).
RecordingSummary scan_recording(std::span<const uint8_t> file);

}  // namespace sluice::media::record
