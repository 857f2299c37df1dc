// The sample table of one MP4 track (stbl: stts, ctts, stsc, stsz/stz2, stco/co64, stss) expanded
// into Samples: offset, size, decode time, composition offset and sync flag of each.
//
// Rules:
//  1. Every count is checked against the bytes of the table that declares it before anything is
//     reserved: a 20-byte stsz cannot claim a million sizes. A constant-size stsz cannot claim
//     more samples than the file could hold side by side. Past kMaxMp4Samples, an error.
//  2. stsz decides how many samples there are. A shorter stts repeats its last delta and a
//     shorter ctts gives 0; longer ones are ignored (ffmpeg is as tolerant).
//  3. Samples lie where stsc and stco/co64 say. When the chunks run out, or a sample lies past the
//     end of the file (a truncated download or recording), the track ends before that sample.
//  4. No stss: every sample is a sync sample. An stss with no entries: none is.
//  5. Times: decode time + `shift` (track units, from the edit list) in milliseconds, rounded
//     down, plus `offset_ms` (which makes the earliest sample of the movie start at 0). A time
//     that does not fit the 32-bit RTMP timestamp, or a composition offset that does not fit the
//     FLV SI24, is an error.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "media/sample.hpp"
#include "base/result.hpp"

namespace sluice::media::mp4 {

// A file with more samples than this is refused (a day of 60 fps video with 48 kHz AAC is about
// 9.4M): the index of a crafted file must not reach gigabytes.
inline constexpr uint32_t kMaxMp4Samples = 50'000'000;

// The payloads (version and flags included) of a track's sample table boxes; empty = absent.
struct SampleTables {
  std::span<const uint8_t> stts;
  std::span<const uint8_t> ctts;
  std::span<const uint8_t> stsc;
  std::span<const uint8_t> sizes;    // stsz, or stz2 when compact_sizes
  std::span<const uint8_t> offsets;  // stco, or co64 when large_offsets
  std::span<const uint8_t> stss;
  bool compact_sizes = false;
  bool large_offsets = false;
  bool has_ctts = false;
  bool has_stss = false;
};

struct TrackTiming {
  uint32_t timescale = 0;  // mdhd: track units per second, non-zero
  int64_t shift = 0;       // track units added to each decode time (edit list)
  int64_t offset_ms = 0;   // added after the conversion to milliseconds
};

// Floor of units * 1000 / timescale, computed without overflow; false when the result would be
// outside +-2^40 ms (no real timestamp is; it keeps later sums safe).
bool units_to_ms(int64_t units, uint32_t timescale, int64_t& ms);

// Expands a track's table into samples of `type` (kSampleVideo or kSampleAudio). `max_samples`
// is what is left of the per-file sample limit. Audio samples get cts 0 and no keyframe flag.
Result<std::vector<Sample>> expand_samples(const SampleTables& tables, uint8_t type, const TrackTiming& timing,
                                           uint64_t file_size, uint32_t max_samples);

}  // namespace sluice::media::mp4
