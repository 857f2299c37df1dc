// FlvIndexer: builds the MediaIndex of an FLV file by scanning its tag headers, a piece at a time,
// without doing any I/O itself.
//
// Lifecycle:
//  1. Construct with the file's size.
//  2. While !done(): read at least next_request().size bytes of the file at
//     next_request().offset (reading more is better, e.g. 256 KiB: every tag whose header and
//     first bytes are inside the piece is indexed from it), and feed() them with that offset.
//     The request may skip ahead over frame bodies: only tag headers, the first bytes of each body
//     and whole sequence headers and onMetaData are ever needed.
//  3. finish() once, to get the index.
//
// Rules:
//  1. The keyframe index is always built by scanning the tags. An onMetaData `keyframes` object
//     is not trusted (writers produce stale or wrong ones: a remuxed or truncated file keeps the
//     table of its source) and scanning costs only the headers.
//  2. A last tag cut short by the end of the file ends the index just before it. PreviousTagSize
//     fields are not checked (many writers get them wrong and nothing depends on them).
//  3. The first onMetaData tag and the first video and audio sequence headers (before any frame
//     of their kind) become MediaIndex::metadata / video_sequence_header / audio_sequence_header,
//     not samples. Later sequence headers stay samples and are listed in sequence_header_samples.
//     Without an onMetaData tag one is built (metadata_builder.hpp).
//  4. Tags other than audio (8), video (9) and AMF0 script (18) are skipped.
//  5. The duration is the largest audio/video timestamp (the file's onMetaData is passed on as it
//     is, but the index does not depend on its duration).
#pragma once

#include <cstdint>
#include <span>

#include "media/flv/flv_tag_head.hpp"
#include "media/vod/media_index.hpp"
#include "base/result.hpp"

namespace sluice::media::vod {

// More tags than this is not a real file (a day of 60 fps video with audio is 10M): it stops a
// crafted file of tiny tags from building a multi-gigabyte index.
inline constexpr uint32_t kMaxFlvSamples = 50'000'000;
// onMetaData and sequence headers are copied into the index; bigger ones are left as samples, so
// one file cannot make every index hold megabytes of script data.
inline constexpr uint32_t kMaxFlvMetadataBytes = 4u << 20;
inline constexpr uint32_t kMaxFlvSequenceHeaderBytes = 1u << 20;

class FlvIndexer {
 public:
  explicit FlvIndexer(uint64_t file_size);

  // The bytes needed next: at least this range (clipped to the file).
  ByteRange next_request() const;
  bool done() const { return state_ == State::Done; }

  // `bytes` are the file's bytes starting at `offset`; they must cover next_request().
  // Errors: Errc::BadState when they do not (a short read or a caller bug), Errc::Malformed for
  // a file that is not FLV, Errc::LimitExceeded past kMaxFlvSamples. After an error every call
  // returns the same error.
  Result<void> feed(uint64_t offset, std::span<const uint8_t> bytes);

  // The index, once done(). Errc::BadState before that, Errc::Malformed when the file holds no
  // audio or video tag. Moves the index out: call it once.
  Result<MediaIndex> finish();

 private:
  enum class State : uint8_t { FileHeader, Tags, Done, Failed };

  // Each consumes what it can from `avail` (the file from pos_ on) and returns false when it
  // needs more bytes than that (want_ says how many).
  Result<bool> step(std::span<const uint8_t> avail);
  Result<bool> step_file_header(std::span<const uint8_t> avail);
  Result<bool> step_tag(std::span<const uint8_t> avail);
  bool keeps_body(uint8_t type, const FlvTagHead& c, uint32_t size) const;
  void keep_body(uint8_t type, std::span<const uint8_t> body);
  Result<void> add_sample(uint8_t type, const FlvTagHead& c, uint64_t body_offset, uint32_t size, uint32_t timestamp);
  void learn_codecs(uint8_t type, const FlvTagHead& c);
  void settle();
  Result<void> fail(Error e);

  uint64_t file_size_;
  uint64_t pos_ = 0;   // where the next unit (file header or tag) starts
  uint64_t want_ = 0;  // bytes from pos_ that the next step needs
  State state_ = State::FileHeader;
  Error error_;
  MediaIndex index_;
  bool seen_video_frame_ = false;
  bool seen_audio_frame_ = false;
  bool seen_metadata_ = false;
};

// Indexes a whole file held in memory (tests, tools, fuzzing).
Result<MediaIndex> index_flv(std::span<const uint8_t> file);

}  // namespace sluice::media::vod
