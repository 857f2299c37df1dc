// libFuzzer target for the VOD FLV indexer: arbitrary bytes as a whole file.
// Properties: no crash or sanitizer report; every indexed sample lies inside the file and becomes
// a tag body; keyframe entries point at keyframes in ascending time; and indexing the file in the
// smallest pieces the indexer asks for gives the same index as indexing it whole.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <vector>

#include "media/vod/flv_indexer.hpp"
#include "media/vod/tag_body.hpp"

using namespace sluice;
using namespace sluice::media::vod;

namespace {

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "flv indexer: %s\n", what);
  std::abort();
}

void exercise(const MediaIndex& index, std::span<const uint8_t> file) {
  std::vector<uint8_t> body;
  for (const Sample& s : index.samples) {
    if (s.file_offset > file.size() || s.size > file.size() - s.file_offset) fail("sample outside the file");
    body.clear();
    if (!sample_to_tag_body(index, s, file.subspan(s.file_offset, s.size), body)) fail("FLV sample has no tag body");
  }
  uint32_t last_time = 0;
  for (const Keyframe& k : index.keyframes) {
    if (k.sample >= index.samples.size() || !index.samples[k.sample].keyframe) fail("keyframe entry");
    if (k.time_ms < last_time) fail("keyframe times descend");
    last_time = k.time_ms;
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
    const uint32_t at = index.seek(ms);
    if (at >= n && n > 0) fail("seek past the samples");
    (void)index.last_sequence_header(at, kSampleVideo);
  }
}

void index_in_pieces(std::span<const uint8_t> file, const MediaIndex& whole) {
  FlvIndexer indexer(file.size());
  while (!indexer.done()) {
    const ByteRange need = indexer.next_request();
    if (need.end() > file.size()) fail("request past the end of the file");
    if (!indexer.feed(need.offset, file.subspan(need.offset, need.size))) fail("piecewise feed failed");
  }
  auto pieces = indexer.finish();
  if (!pieces) fail("piecewise finish failed");
  if (pieces->samples.size() != whole.samples.size() || pieces->metadata != whole.metadata) {
    fail("piecewise index differs");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const uint8_t> file(data, size);
  auto index = index_flv(file);
  if (!index) return 0;
  exercise(*index, file);
  index_in_pieces(file, *index);
  return 0;
}
