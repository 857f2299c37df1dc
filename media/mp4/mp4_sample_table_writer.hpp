// The sample table (stbl tables) of one track of a recording's MP4 copy (record/mp4_layout.hpp),
// built one sample at a time and kept run-length where the format allows it, then written as boxes.
//
// Lifecycle: add() every sample of the track in decode order (the FLV's tag order), close() once,
// then read the figures and write() the tables (as often as needed: the layout writes the head a
// second time when it must switch to 64-bit chunk offsets). Chunk offsets are written relative to
// the mdat payload; once the head's size is known, rebase_chunk_offsets() makes them file offsets.
//
// Rules:
//  1. Times are milliseconds, the media timescale being 1000. The track's first decode time
//     becomes its time 0 (the caller delays the track by first_dts() with an edit list).
//  2. MP4 decode times never go back: a sample whose FLV timestamp is below the previous one's is
//     given the previous one's. Its presentation time stays the FLV's (dts + cts), unless that
//     needs a composition offset outside the FLV's SI24 range, where it is clamped.
//  3. The last sample lasts as long as the one before it (0 when it is alone).
//  4. A sample that starts where the track's previous sample ended in the mdat joins that chunk;
//     otherwise it starts a new one. stts, ctts and stsc are run-length; stsz is one constant when
//     every sample has the same size; ctts is written only when some offset is not 0 (version 1
//     when one is negative); stss only when some sample is not a sync sample.
#pragma once

#include <cstdint>
#include <vector>

#include "media/mp4/box_writer.hpp"

namespace sluice::media::mp4 {

// Where write() put a track's chunk offsets (stco or co64 entries) in the head.
struct ChunkOffsetTable {
  size_t at = 0;  // the first entry
  uint32_t count = 0;
  bool co64 = false;
};

// Adds `base` (the file offset of the mdat payload) to every entry of `t` in `head`.
void rebase_chunk_offsets(std::vector<uint8_t>& head, const ChunkOffsetTable& t, uint64_t base);

class Mp4SampleTable {
 public:
  // `mdat_offset` is where the sample starts in the mdat payload (from its first byte).
  void add(uint64_t mdat_offset, uint32_t size, uint32_t dts_ms, int32_t cts_ms, bool sync);
  // Ends the table (rule 3). Call once, after the last add().
  void close();

  uint32_t count() const { return count_; }
  uint32_t first_dts() const { return first_dts_; }
  uint64_t duration() const { return duration_; }  // the media, after close()
  uint64_t last_chunk() const { return chunks_.empty() ? 0 : chunks_.back(); }
  uint32_t max_size() const { return max_size_; }
  uint64_t total_bytes() const { return total_bytes_; }
  // The most bytes of samples whose decode times fall in one second of the track, for the esds
  // bitrate fields.
  uint64_t max_bytes_per_second() const { return max_second_bytes_; }
  // Heap bytes held (the layout's memory bound, rule 6 of record/mp4_layout.hpp).
  size_t memory_bytes() const;

  // stts, ctts, stss, stsz, stsc, then stco (or co64 when `co64`) with the chunk offsets relative
  // to the mdat payload.
  ChunkOffsetTable write(BoxWriter& b, bool co64) const;

 private:
  struct Run {
    uint32_t count = 0;
    uint32_t value = 0;
  };
  struct ChunkRun {
    uint32_t first_chunk = 0;  // 1-based
    uint32_t samples = 0;
  };
  static void push_run(std::vector<Run>& runs, uint32_t value);
  void close_chunk();

  uint32_t count_ = 0;
  uint32_t first_dts_ = 0;
  uint32_t last_dts_ = 0;  // the MP4 decode time of the last sample (rule 2)
  uint64_t duration_ = 0;
  std::vector<Run> stts_;
  std::vector<Run> ctts_;
  bool any_cts_ = false;
  bool negative_cts_ = false;
  std::vector<uint32_t> sync_;   // 1-based sample numbers
  std::vector<uint32_t> sizes_;  // empty while uniform_size_
  bool uniform_size_ = true;
  uint32_t max_size_ = 0;
  uint64_t total_bytes_ = 0;
  std::vector<uint64_t> chunks_;  // mdat payload offsets
  std::vector<ChunkRun> stsc_;
  uint32_t open_chunk_samples_ = 0;
  uint64_t end_ = 0;  // where the last sample ended in the mdat payload
  uint32_t second_ = 0;
  uint64_t second_bytes_ = 0;
  uint64_t max_second_bytes_ = 0;
  bool closed_ = false;
};

}  // namespace sluice::media::mp4
