#include "media/mp4/mp4_sample_table.hpp"

#include <limits>
#include <optional>
#include <string>

#include "media/flv/flv.hpp"
#include "media/mp4/box_reader.hpp"
#include "base/byte_io.hpp"

namespace sluice::media::mp4 {

namespace {

constexpr int64_t kMaxAbsMs = int64_t{1} << 40;
// A sample must fit one RTMP message together with its FLV codec header.
constexpr uint32_t kMaxSampleBytes = kFlvMaxDataSize - kFlvMaxCodecHeaderSize;

// A full box's entry table: u32 count then `count` entries of `entry_size` bytes (after `skip`
// bytes of other fields). The count is checked against the bytes actually there (rule 1).
Result<std::span<const uint8_t>> open_table(std::span<const uint8_t> box, const char* name, size_t skip,
                                            size_t entry_size, uint32_t& count) {
  ByteReader r(box);
  r.skip(kFullBoxHeaderSize + skip);
  count = r.u32be();
  if (r.failed()) return Error(Errc::Truncated, std::string(name) + " header");
  if (count > r.remaining() / entry_size) {
    return Error(Errc::Malformed, std::string(name) + " declares " + std::to_string(count) + " entries in " +
                                      std::to_string(r.remaining()) + " bytes");
  }
  return r.bytes(size_t{count} * entry_size);
}

// stts / ctts: runs of (sample count, value).
class RunCursor {
 public:
  // Past the last run, `repeat_last` gives the last value again (stts), otherwise 0 (ctts).
  RunCursor(std::span<const uint8_t> entries, uint32_t count, bool is_signed, bool repeat_last)
      : entries_(entries), count_(count), signed_(is_signed), repeat_last_(repeat_last) {}

  int64_t next() {
    while (left_ == 0 && index_ < count_) {
      const uint8_t* e = entries_.data() + size_t{index_++} * 8;
      left_ = load_u32be(e);
      const uint32_t raw = load_u32be(e + 4);
      value_ = signed_ ? int64_t{static_cast<int32_t>(raw)} : int64_t{raw};
    }
    if (left_ == 0) return repeat_last_ ? value_ : 0;
    --left_;
    return value_;
  }

 private:
  std::span<const uint8_t> entries_;
  uint32_t count_;
  bool signed_;
  bool repeat_last_;
  uint32_t index_ = 0;
  uint32_t left_ = 0;
  int64_t value_ = 0;
};

// stsz / stz2.
struct SizeTable {
  uint32_t count = 0;
  uint32_t constant = 0;
  uint8_t field_bits = 32;
  std::span<const uint8_t> entries;

  uint32_t at(uint32_t i) const {
    if (constant) return constant;
    switch (field_bits) {
      case 4: return i % 2 ? entries[i / 2] & 0x0F : entries[i / 2] >> 4;
      case 8: return entries[i];
      case 16: return uint32_t(entries[2 * size_t{i}]) << 8 | entries[2 * size_t{i} + 1];
      default: return load_u32be(entries.data() + 4 * size_t{i});
    }
  }
};

Result<SizeTable> open_sizes(const SampleTables& t, uint64_t file_size) {
  SizeTable s;
  ByteReader r(t.sizes);
  r.skip(kFullBoxHeaderSize);
  if (t.compact_sizes) {
    r.skip(3);
    s.field_bits = r.u8();
    if (s.field_bits != 4 && s.field_bits != 8 && s.field_bits != 16) return Error(Errc::Malformed, "stz2 field size");
  } else {
    s.constant = r.u32be();
  }
  s.count = r.u32be();
  if (r.failed()) return Error(Errc::Truncated, "sample size table header");
  if (s.constant) {
    // Samples of one file do not overlap, so they cannot outnumber file_size / size.
    if (s.count > file_size / s.constant)
      return Error(Errc::Malformed, "stsz declares more samples than the file holds");
    return s;
  }
  const uint64_t need_bits = uint64_t{s.count} * s.field_bits;
  if (need_bits > uint64_t{r.remaining()} * 8) {
    return Error(Errc::Malformed, "sample size table declares " + std::to_string(s.count) + " samples in " +
                                      std::to_string(r.remaining()) + " bytes");
  }
  s.entries = r.rest();
  return s;
}

// stsc + stco/co64: where each sample starts.
class ChunkCursor {
 public:
  static Result<ChunkCursor> open(const SampleTables& t) {
    ChunkCursor c;
    auto stsc = open_table(t.stsc, "stsc", 0, 12, c.runs_);
    if (!stsc) return std::move(stsc).error();
    c.stsc_ = *stsc;
    c.offset_size_ = t.large_offsets ? 8 : 4;
    auto chunks = open_table(t.offsets, t.large_offsets ? "co64" : "stco", 0, c.offset_size_, c.chunks_);
    if (!chunks) return std::move(chunks).error();
    c.offsets_ = *chunks;
    uint32_t previous = 0;
    for (uint32_t i = 0; i < c.runs_; ++i) {
      const uint32_t first = c.first_chunk(i);
      if (first == 0 || first <= previous) return Error(Errc::Malformed, "stsc first_chunk not ascending from 1");
      previous = first;
    }
    return c;
  }

  // The offset of the next sample of `size` bytes; nullopt when the chunks are used up.
  std::optional<uint64_t> next(uint32_t size) {
    while (left_ == 0) {
      if (!enter_next_chunk()) return std::nullopt;
    }
    --left_;
    const uint64_t at = cursor_;
    cursor_ =
        size > std::numeric_limits<uint64_t>::max() - cursor_ ? std::numeric_limits<uint64_t>::max() : cursor_ + size;
    return at;
  }

 private:
  uint32_t first_chunk(uint32_t run) const { return load_u32be(stsc_.data() + size_t{run} * 12); }
  uint32_t samples_per_chunk(uint32_t run) const { return load_u32be(stsc_.data() + size_t{run} * 12 + 4); }
  uint64_t chunk_offset(uint32_t chunk) const {
    const uint8_t* p = offsets_.data() + size_t{chunk} * offset_size_;
    return offset_size_ == 8 ? uint64_t{load_u32be(p)} << 32 | load_u32be(p + 4) : load_u32be(p);
  }
  // Chunks without samples are passed over; the loop is bounded by the chunk count.
  bool enter_next_chunk() {
    if (next_chunk_ >= chunks_ || runs_ == 0) return false;
    // first_chunk is 1-based: run r covers chunks [first_chunk(r) - 1, first_chunk(r + 1) - 1).
    while (run_ + 1 < runs_ && first_chunk(run_ + 1) - 1 <= next_chunk_) ++run_;
    left_ = samples_per_chunk(run_);
    cursor_ = chunk_offset(next_chunk_++);
    return true;
  }

  std::span<const uint8_t> stsc_;
  std::span<const uint8_t> offsets_;
  uint32_t runs_ = 0;
  uint32_t chunks_ = 0;
  size_t offset_size_ = 4;
  uint32_t run_ = 0;
  uint32_t next_chunk_ = 0;
  uint32_t left_ = 0;
  uint64_t cursor_ = 0;
};

// stss: ascending 1-based sample numbers of sync samples.
class SyncCursor {
 public:
  SyncCursor(std::span<const uint8_t> entries, uint32_t count, bool all)
      : entries_(entries), count_(count), all_(all) {}

  bool is_sync(uint32_t sample_number) {
    if (all_) return true;
    while (index_ < count_ && entry(index_) < sample_number) ++index_;
    return index_ < count_ && entry(index_) == sample_number;
  }

 private:
  uint32_t entry(uint32_t i) const { return load_u32be(entries_.data() + size_t{i} * 4); }
  std::span<const uint8_t> entries_;
  uint32_t count_;
  bool all_;
  uint32_t index_ = 0;
};

// Millisecond times of one sample (rule 5).
Result<void> sample_times(int64_t dts, int64_t cts, const TrackTiming& timing, Sample& s) {
  int64_t dts_ms = 0;
  int64_t pts_ms = 0;
  if (!units_to_ms(dts + timing.shift, timing.timescale, dts_ms) ||
      !units_to_ms(dts + cts + timing.shift, timing.timescale, pts_ms)) {
    return Error(Errc::Malformed, "sample time out of range");
  }
  dts_ms += timing.offset_ms;
  if (dts_ms < 0 || dts_ms > std::numeric_limits<uint32_t>::max()) {
    return Error(Errc::Unsupported, "sample time outside 32-bit milliseconds");
  }
  const int64_t cts_ms = pts_ms + timing.offset_ms - dts_ms;
  if (cts_ms < -(1 << 23) || cts_ms >= (1 << 23)) return Error(Errc::Malformed, "composition offset outside SI24");
  s.dts_ms = static_cast<uint32_t>(dts_ms);
  s.cts_ms = static_cast<int32_t>(cts_ms);
  return ok();
}

}  // namespace

bool units_to_ms(int64_t units, uint32_t timescale, int64_t& ms) {
  if (timescale == 0) return false;
  const int64_t ts = timescale;
  int64_t q = units / ts;
  int64_t r = units % ts;
  if (r < 0) --q, r += ts;  // floor, also for negative times (edit lists shift before 0)
  if (q > kMaxAbsMs / 1000 || q < -kMaxAbsMs / 1000) return false;
  ms = q * 1000 + r * 1000 / ts;
  return true;
}

Result<std::vector<Sample>> expand_samples(const SampleTables& t, uint8_t type, const TrackTiming& timing,
                                           uint64_t file_size, uint32_t max_samples) {
  auto sizes = open_sizes(t, file_size);
  if (!sizes) return std::move(sizes).error();
  if (sizes->count > max_samples) return Error(Errc::LimitExceeded, "too many samples");
  uint32_t stts_count = 0, ctts_count = 0, stss_count = 0;
  auto stts = open_table(t.stts, "stts", 0, 8, stts_count);
  if (!stts) return std::move(stts).error();
  std::span<const uint8_t> ctts_entries, stss_entries;
  if (t.has_ctts) {
    auto ctts = open_table(t.ctts, "ctts", 0, 8, ctts_count);
    if (!ctts) return std::move(ctts).error();
    ctts_entries = *ctts;
  }
  if (t.has_stss) {
    auto stss = open_table(t.stss, "stss", 0, 4, stss_count);
    if (!stss) return std::move(stss).error();
    stss_entries = *stss;
  }
  auto chunks = ChunkCursor::open(t);
  if (!chunks) return std::move(chunks).error();

  // Version 0 ctts offsets are unsigned by the book, but writers store negative ones there too;
  // reading both versions as signed is what every demuxer does.
  RunCursor deltas(*stts, stts_count, false, true);
  RunCursor offsets(ctts_entries, ctts_count, true, false);
  SyncCursor sync(stss_entries, stss_count, !t.has_stss);
  std::vector<Sample> out;
  out.reserve(sizes->count);  // bounded by rule 1
  int64_t dts = 0;
  for (uint32_t i = 0; i < sizes->count; ++i) {
    Sample s;
    s.type = type;
    s.size = sizes->at(i);
    if (s.size > kMaxSampleBytes)
      return Error(Errc::LimitExceeded, "sample " + std::to_string(i) + " too large for RTMP");
    const auto offset = chunks->next(s.size);
    if (!offset || *offset > file_size || s.size > file_size - *offset) break;  // rule 3
    s.file_offset = *offset;
    const int64_t cts = type == kSampleVideo ? offsets.next() : 0;
    auto timed = sample_times(dts, cts, timing, s);
    if (!timed) return std::move(timed).error();
    s.keyframe = type == kSampleVideo && sync.is_sync(i + 1);
    out.push_back(s);
    dts += deltas.next();  // <= 50M * 2^32: no overflow
  }
  return out;
}

}  // namespace sluice::media::mp4
