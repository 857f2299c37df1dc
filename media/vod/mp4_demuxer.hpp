// Mp4Demuxer: finds an MP4 file's movie box wherever it is and builds the file's MediaIndex,
// without doing any I/O itself.
//
// Lifecycle:
//  1. Construct with the file's size.
//  2. While !done(): read next_request() (at least its size; more is fine and saves reads: with
//     a 64 KiB first read, a faststart file's moov often comes in the first piece) and feed()
//     the bytes with their offset. The demuxer first asks for top-level box headers one after
//     the other (8 or 16 bytes each; an mdat is skipped, not read), then for the whole moov box.
//  3. finish() once, to get the index.
//
// Rules:
//  1. moov may be before or after mdat. A moov larger than Limits::max_moov_bytes is refused
//     before the caller is asked to read it.
//  2. Fragmented MP4 (a moof box, or mvex inside moov) is refused: Errc::Unsupported "fragmented
//     MP4 is not supported".
//  3. A top-level box that claims to extend past the end of the file is an error. The scan stops
//     at moov, so the mdat of a truncated faststart file is never looked at: its samples that lie
//     inside the file are played (mp4_sample_table.hpp rule 3).
//  4. At most kMaxTopLevelBoxes top-level boxes are visited before moov.
#pragma once

#include <cstdint>
#include <span>

#include "media/mp4/mp4_sample_table.hpp"
#include "media/vod/media_index.hpp"
#include "base/result.hpp"

namespace sluice::media::vod {

// The moov of a 24-hour movie with 10M samples is about 100 MB; beyond this we refuse rather than
// let one file make the server allocate and parse an arbitrary amount.
inline constexpr uint64_t kMaxMoovBytes = 256ull << 20;
// A real file has a handful of top-level boxes (ftyp, free, mdat, moov, udta). Each costs the
// caller one small read, so a file of millions of empty boxes would cost millions of reads.
inline constexpr uint32_t kMaxTopLevelBoxes = 1000;

class Mp4Demuxer {
 public:
  struct Limits {
    uint64_t max_moov_bytes = kMaxMoovBytes;
    // A constant-size stsz can declare up to file_size / sample_size samples without a byte of
    // table: a server that indexes untrusted uploads may want far fewer than kMaxMp4Samples
    // (24 bytes of index each).
    uint32_t max_samples = mp4::kMaxMp4Samples;
  };

  explicit Mp4Demuxer(uint64_t file_size) : Mp4Demuxer(file_size, Limits{}) {}
  Mp4Demuxer(uint64_t file_size, Limits limits);

  // The bytes needed next. Empty once done() or failed.
  ByteRange next_request() const;
  bool done() const { return state_ == State::Done; }

  // `bytes` are the file's bytes starting at `offset`; they must cover next_request().
  // Errors: Errc::BadState when they do not; Errc::Malformed (no moov, lying sizes, ...),
  // Errc::Unsupported (fragmented), Errc::LimitExceeded (limits above, or from the movie parse).
  // After an error every call returns the same error.
  Result<void> feed(uint64_t offset, std::span<const uint8_t> bytes);

  // The index, once done(); moves it out: call it once.
  Result<MediaIndex> finish();

 private:
  enum class State : uint8_t { BoxHeader, Movie, Done, Failed };

  // Each consumes the unit at pos_ if `avail` (the file from pos_ on) holds it, and returns
  // false when it does not.
  Result<bool> step(std::span<const uint8_t> avail);
  Result<bool> step_box_header(std::span<const uint8_t> avail);
  Result<bool> step_movie(std::span<const uint8_t> avail);
  Result<void> fail(Error e);

  uint64_t file_size_;
  Limits limits_;
  uint64_t pos_ = 0;        // the next top-level box, or the moov box
  uint64_t moov_size_ = 0;  // whole box once found
  uint8_t moov_header_ = 0;
  uint32_t boxes_seen_ = 0;
  State state_ = State::BoxHeader;
  Error error_;
  MediaIndex index_;
};

// Indexes a whole file held in memory (tests, tools, fuzzing).
Result<MediaIndex> demux_mp4(std::span<const uint8_t> file);

}  // namespace sluice::media::vod
