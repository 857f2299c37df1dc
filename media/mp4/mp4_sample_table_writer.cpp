#include "media/mp4/mp4_sample_table_writer.hpp"

#include <algorithm>
#include <cassert>
#include <limits>

#include "media/mp4/box_reader.hpp"

namespace sluice::media::mp4 {

namespace {

// The FLV composition time is an SI24; staying inside it keeps the copy playable over RTMP too.
constexpr int64_t kCtsMin = -(int64_t{1} << 23);
constexpr int64_t kCtsMax = (int64_t{1} << 23) - 1;

}  // namespace

void Mp4SampleTable::push_run(std::vector<Run>& runs, uint32_t value) {
  if (!runs.empty() && runs.back().value == value && runs.back().count < std::numeric_limits<uint32_t>::max()) {
    ++runs.back().count;
  } else {
    runs.push_back({1, value});
  }
}

void Mp4SampleTable::add(uint64_t mdat_offset, uint32_t size, uint32_t dts_ms, int32_t cts_ms, bool sync) {
  assert(!closed_);
  uint32_t dts = dts_ms;
  if (count_ == 0) {
    first_dts_ = dts;
  } else {
    dts = std::max(dts, last_dts_);  // rule 2
    push_run(stts_, dts - last_dts_);
    duration_ += dts - last_dts_;
  }
  const int64_t pts = int64_t{dts_ms} + cts_ms;
  const auto cts = static_cast<int32_t>(std::clamp(pts - dts, kCtsMin, kCtsMax));
  push_run(ctts_, static_cast<uint32_t>(cts));
  any_cts_ = any_cts_ || cts != 0;
  negative_cts_ = negative_cts_ || cts < 0;
  last_dts_ = dts;

  ++count_;
  if (sync) sync_.push_back(count_);
  // Sizes are stored only once they differ: until then the first one stands for all.
  if (uniform_size_ && count_ > 1 && size != max_size_) {
    uniform_size_ = false;
    sizes_.assign(count_ - 1, max_size_);
  }
  if (!uniform_size_) sizes_.push_back(size);
  max_size_ = std::max(max_size_, size);
  total_bytes_ += size;

  if (chunks_.empty() || mdat_offset != end_) {  // rule 4
    close_chunk();
    chunks_.push_back(mdat_offset);
  }
  ++open_chunk_samples_;
  end_ = mdat_offset + size;

  // Bytes per second of decode time, for the bitrate figures.
  if (dts / 1000 != second_) {
    second_ = dts / 1000;
    second_bytes_ = 0;
  }
  second_bytes_ += size;
  max_second_bytes_ = std::max(max_second_bytes_, second_bytes_);
}

void Mp4SampleTable::close_chunk() {
  if (open_chunk_samples_ == 0) return;
  if (stsc_.empty() || stsc_.back().samples != open_chunk_samples_) {
    stsc_.push_back({static_cast<uint32_t>(chunks_.size()), open_chunk_samples_});
  }
  open_chunk_samples_ = 0;
}

void Mp4SampleTable::close() {
  assert(!closed_);
  closed_ = true;
  close_chunk();
  if (count_ == 0) return;
  const uint32_t last = stts_.empty() ? 0 : stts_.back().value;  // rule 3
  push_run(stts_, last);
  duration_ += last;
}

size_t Mp4SampleTable::memory_bytes() const {
  return stts_.capacity() * sizeof(Run) + ctts_.capacity() * sizeof(Run) + sync_.capacity() * 4 +
         sizes_.capacity() * 4 + chunks_.capacity() * 8 + stsc_.capacity() * sizeof(ChunkRun);
}

ChunkOffsetTable Mp4SampleTable::write(BoxWriter& b, bool co64) const {
  assert(closed_);
  ByteWriter& w = b.w();
  {
    BoxScope stts(b, box_type("stts"), 0, 0);
    w.u32be(static_cast<uint32_t>(stts_.size()));
    for (const Run& r : stts_) w.u32be(r.count), w.u32be(r.value);
  }
  if (any_cts_) {
    BoxScope ctts(b, box_type("ctts"), negative_cts_ ? 1 : 0, 0);
    w.u32be(static_cast<uint32_t>(ctts_.size()));
    for (const Run& r : ctts_) w.u32be(r.count), w.u32be(r.value);
  }
  if (sync_.size() != count_) {
    BoxScope stss(b, box_type("stss"), 0, 0);
    w.u32be(static_cast<uint32_t>(sync_.size()));
    for (uint32_t n : sync_) w.u32be(n);
  }
  {
    BoxScope stsz(b, box_type("stsz"), 0, 0);
    w.u32be(uniform_size_ && count_ > 0 ? max_size_ : 0);
    w.u32be(count_);
    if (!uniform_size_) {
      for (uint32_t s : sizes_) w.u32be(s);
    }
  }
  {
    BoxScope stsc(b, box_type("stsc"), 0, 0);
    w.u32be(static_cast<uint32_t>(stsc_.size()));
    for (const ChunkRun& r : stsc_) w.u32be(r.first_chunk), w.u32be(r.samples), w.u32be(1);
  }
  BoxScope offsets(b, co64 ? box_type("co64") : box_type("stco"), 0, 0);
  w.u32be(static_cast<uint32_t>(chunks_.size()));
  const ChunkOffsetTable table{b.size(), static_cast<uint32_t>(chunks_.size()), co64};
  for (uint64_t c : chunks_) {
    if (co64) {
      w.u64be(c);
    } else {
      assert(c <= std::numeric_limits<uint32_t>::max());
      w.u32be(static_cast<uint32_t>(c));
    }
  }
  return table;
}

void rebase_chunk_offsets(std::vector<uint8_t>& head, const ChunkOffsetTable& t, uint64_t base) {
  uint8_t* p = head.data() + t.at;
  for (uint32_t i = 0; i < t.count; ++i) {
    if (t.co64) {
      const uint64_t v = (uint64_t{load_u32be(p)} << 32 | load_u32be(p + 4)) + base;
      store_u32be(p, static_cast<uint32_t>(v >> 32));
      store_u32be(p + 4, static_cast<uint32_t>(v));
      p += 8;
    } else {
      const uint64_t v = load_u32be(p) + base;
      assert(v <= std::numeric_limits<uint32_t>::max());  // the layout chose co64 otherwise
      store_u32be(p, static_cast<uint32_t>(v));
      p += 4;
    }
  }
}

}  // namespace sluice::media::mp4
