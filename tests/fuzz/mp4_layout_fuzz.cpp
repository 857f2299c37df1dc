// libFuzzer target for the MP4 copy of a recording (media/record/mp4_layout): arbitrary bytes as
// a finished FLV, indexed with FlvIndexer, planned and applied in memory.
// Properties: no crash or sanitizer report; a refused plan is Malformed, Unsupported or
// LimitExceeded; applying a plan gives exactly final_size bytes; the repo's MP4 demuxer reads the
// result with video_samples + audio_samples samples, which in mdat order lie back to back right
// after the head, and each is the tail of an FLV audio/video tag body of its type (a 1, 2, 5 or 8
// byte FLV header less), taken in the FLV's order, byte for byte, with the FLV's key flag, its
// decode time held monotonic per track and counted from the earliest one, and its presentation
// time (clamped to SI24); and giving the
// builder more of each body than head_bytes() asks for changes nothing. Seeds: corpus/mp4_layout/,
// made by mp4_layout_seeds.py, and ffmpeg-made FLV files from corpus/flv_reader/.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <vector>

#include "media/mp4/mp4_track.hpp"
#include "media/record/mp4_layout.hpp"
#include "media/vod/flv_indexer.hpp"
#include "media/vod/mp4_demuxer.hpp"
#include "media/vod/tag_body.hpp"

using namespace sluice;
using namespace sluice::media::record;
using namespace sluice::media::mp4;
using namespace sluice::media::vod;

namespace {

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "mp4 layout: %s\n", what);
  std::abort();
}

// The builder fed with every body up to its end, not just head_bytes(): the same layout.
void check_more_bytes_change_nothing(const MediaIndex& index, std::span<const uint8_t> file, const Mp4Layout& layout) {
  Mp4Builder builder(index);
  for (const Sample& s : index.samples) {
    if (!builder.add(s, file.subspan(s.file_offset, s.size))) fail("add with the whole body failed");
  }
  auto again = builder.finish();
  if (!again || again->head != layout.head || again->copy.size() != layout.copy.size() ||
      again->notes != layout.notes || again->left_out != layout.left_out) {
    fail("more bytes per sample changed the layout");
  }
}

// The FLV sample each MP4 sample (in mdat order) comes from, and its decode time held monotonic
// per track: the tail of an FLV audio/video tag body, in the FLV's order.
struct Origin {
  const Sample* flv = nullptr;
  uint32_t dts = 0;
};

std::vector<Origin> origins(const MediaIndex& flv_index, const Mp4Layout& layout) {
  std::vector<Origin> out;
  size_t j = 0;  // the next FLV sample that may hold the next MP4 sample
  uint32_t last_dts[2] = {0, 0};
  bool started[2] = {false, false};
  for (const ByteRange& r : layout.copy) {
    while (j < flv_index.samples.size() && flv_index.samples[j].file_offset + flv_index.samples[j].size != r.end()) ++j;
    if (j == flv_index.samples.size()) fail("a sample is not the end of an FLV tag body, in order");
    const Sample& s = flv_index.samples[j++];
    const uint64_t prefix = r.offset - s.file_offset;
    if (r.offset <= s.file_offset || (prefix != 1 && prefix != 2 && prefix != 5 && prefix != 8))
      fail("FLV header size");
    if (s.type == kSampleScript || s.sequence_header) fail("sample type");
    const int t = s.type == kSampleVideo ? 0 : 1;
    last_dts[t] = started[t] ? std::max(s.dts_ms, last_dts[t]) : s.dts_ms;
    started[t] = true;
    out.push_back({&s, last_dts[t]});
  }
  return out;
}

// What the demuxer finds, in mdat order, against the FLV's samples.
void check_samples(const MediaIndex& flv_index, std::span<const uint8_t> file, const Mp4Layout& layout,
                   const std::vector<uint8_t>& mp4) {
  auto demuxed = demux_mp4(mp4);
  if (!demuxed) fail("the demuxer refuses the MP4");
  std::vector<Sample> got = demuxed->samples;
  if (got.size() != uint64_t{layout.video_samples} + layout.audio_samples || got.size() != layout.copy.size()) {
    fail("sample count");
  }
  std::sort(got.begin(), got.end(), [](const Sample& a, const Sample& b) { return a.file_offset < b.file_offset; });
  const std::vector<Origin> from = origins(flv_index, layout);
  // The movie starts at the earliest decode time; a track starting later has an empty edit, which
  // the demuxer ignores past kMaxEditSeconds (then the track starts at 0).
  uint32_t first[2] = {UINT32_MAX, UINT32_MAX};
  for (const Origin& o : from) {
    uint32_t& f = first[o.flv->type == kSampleVideo ? 0 : 1];
    if (f == UINT32_MAX) f = o.dts;
  }
  const uint32_t start = std::min(first[0], first[1]);
  uint64_t at = layout.head.size();
  for (size_t k = 0; k < got.size(); ++k) {
    const Sample& m = got[k];
    const Sample& s = *from[k].flv;
    const ByteRange& r = layout.copy[k];
    if (m.file_offset != at || m.size != r.size || m.size == 0) fail("samples not back to back after the head");
    if (m.type != s.type) fail("sample type");
    if (!std::equal(mp4.begin() + static_cast<ptrdiff_t>(m.file_offset),
                    mp4.begin() + static_cast<ptrdiff_t>(m.file_offset + m.size),
                    file.begin() + static_cast<ptrdiff_t>(r.offset))) {
      fail("sample bytes");
    }
    const uint32_t track_first = first[s.type == kSampleVideo ? 0 : 1];
    const uint32_t delay = track_first - start;
    const uint32_t dts = from[k].dts - (delay / 1000 > kMaxEditSeconds ? track_first : start);
    if (m.dts_ms != dts) fail("decode time");
    if (from[k].dts - start > layout.duration_ms) fail("duration");
    if (s.type == kSampleVideo) {
      const int64_t cts = std::clamp<int64_t>(int64_t{s.dts_ms} + s.cts_ms - from[k].dts, -(1 << 23), (1 << 23) - 1);
      if (m.cts_ms != cts) fail("composition time");
      if (m.keyframe != s.keyframe) fail("key flag");
    }
    at += m.size;
  }
  if (at != mp4.size()) fail("bytes after the last sample");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const uint8_t> file(data, size);
  auto index = index_flv(file);
  if (!index) return 0;
  auto layout = plan_mp4(*index, file);
  if (!layout) {
    const Errc e = layout.error().code;
    if (e != Errc::Malformed && e != Errc::Unsupported && e != Errc::LimitExceeded) fail("unexpected error");
    return 0;
  }
  uint64_t total = layout->head.size();
  for (const ByteRange& r : layout->copy) {
    if (r.end() > size || r.size == 0) fail("copy range outside the FLV");
    total += r.size;
  }
  if (total != layout->final_size) fail("final size");
  const std::vector<uint8_t> mp4 = apply_mp4_layout(*layout, file);
  if (mp4.size() != layout->final_size) fail("applied size");
  if (layout->video_samples + layout->audio_samples == 0) fail("a layout without samples");
  check_samples(*index, file, *layout, mp4);
  check_more_bytes_change_nothing(*index, file, *layout);
  return 0;
}
