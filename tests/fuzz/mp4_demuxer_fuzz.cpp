// libFuzzer target for the VOD MP4 demuxer: arbitrary bytes as a whole file.
// Properties: no crash, sanitizer report or oversized allocation (run with -rss_limit_mb); every
// sample lies inside the file and converts to a tag body; samples are in decode order; keyframe
// entries point at keyframes; and demuxing with only the bytes the demuxer asks for gives the same
// index as handing it the whole file.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <vector>

#include "media/vod/mp4_demuxer.hpp"
#include "media/vod/tag_body.hpp"

using namespace sluice;
using namespace sluice::media::vod;

namespace {

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "mp4 demuxer: %s\n", what);
  std::abort();
}

void exercise(const MediaIndex& index, std::span<const uint8_t> file) {
  std::vector<uint8_t> body;
  uint32_t last_dts = 0;
  for (const Sample& s : index.samples) {
    if (s.file_offset > file.size() || s.size > file.size() - s.file_offset) fail("sample outside the file");
    if (s.dts_ms < last_dts) fail("samples not in decode order");
    last_dts = s.dts_ms;
    body.clear();
    if (!sample_to_tag_body(index, s, file.subspan(s.file_offset, s.size), body)) fail("sample has no tag body");
  }
  for (const Keyframe& k : index.keyframes) {
    if (k.sample >= index.samples.size() || !index.samples[k.sample].keyframe) fail("keyframe entry");
  }
  const auto n = static_cast<uint32_t>(index.samples.size());
  for (uint32_t next = 0; next < n;) {
    const ReadPlan plan = index.plan_read(next, n, 4096);
    if (plan.end <= next || plan.bytes.end() > file.size()) fail("read plan");
    const auto buffer = file.subspan(plan.bytes.offset, plan.bytes.size);
    for (uint32_t i = plan.first; i < plan.end; ++i) {
      if (!plan.sample_bytes(buffer, index.samples[i])) fail("sample not in its read plan");
    }
    next = plan.end;
  }
  for (uint32_t ms : {0u, 1000u, 0xFFFFFFFFu}) {
    if (n > 0 && index.seek(ms) >= n) fail("seek past the samples");
  }
}

void demux_in_pieces(std::span<const uint8_t> file, const MediaIndex& whole) {
  Mp4Demuxer demuxer(file.size());
  while (!demuxer.done()) {
    const ByteRange need = demuxer.next_request();
    if (need.end() > file.size()) fail("request past the end of the file");
    if (!demuxer.feed(need.offset, file.subspan(need.offset, need.size))) fail("piecewise feed failed");
  }
  auto pieces = demuxer.finish();
  if (!pieces) fail("piecewise finish failed");
  if (pieces->samples.size() != whole.samples.size() || pieces->metadata != whole.metadata) {
    fail("piecewise index differs");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const uint8_t> file(data, size);
  auto index = demux_mp4(file);
  if (!index) return 0;
  exercise(*index, file);
  demux_in_pieces(file, *index);
  return 0;
}
