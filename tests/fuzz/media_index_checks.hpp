// What the fuzz targets of the VOD indexers (flv_reader_fuzz, mp4_demuxer_fuzz) check of the index
// they made of an input: every sample lies inside the file and becomes a tag body, keyframe entries
// point at keyframes, each read plan holds its samples, a seek lands inside the samples; and
// indexing with only the bytes the indexer asks for gives the same index as the whole file.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <vector>

#include "media/vod/media_index.hpp"
#include "media/vod/tag_body.hpp"

namespace sluice::fuzz {

// Aborts (a crash to libFuzzer) naming the indexer and the property.
[[noreturn]] inline void index_fail(const char* who, const char* what) {
  std::fprintf(stderr, "%s: %s\n", who, what);
  std::abort();
}

inline void check_index(const char* who, const media::vod::MediaIndex& index, std::span<const uint8_t> file) {
  using namespace media::vod;
  std::vector<uint8_t> body;
  for (const Sample& s : index.samples) {
    if (s.file_offset > file.size() || s.size > file.size() - s.file_offset) index_fail(who, "sample outside the file");
    body.clear();
    if (!sample_to_tag_body(index, s, file.subspan(s.file_offset, s.size), body)) {
      index_fail(who, "sample has no tag body");
    }
  }
  for (const Keyframe& k : index.keyframes) {
    if (k.sample >= index.samples.size() || !index.samples[k.sample].keyframe) index_fail(who, "keyframe entry");
  }
  const auto n = static_cast<uint32_t>(index.samples.size());
  for (uint32_t next = 0; next < n;) {
    const ReadPlan plan = index.plan_read(next, n, 4096);
    if (plan.end <= next || plan.bytes.end() > file.size()) index_fail(who, "read plan");
    const auto buffer = file.subspan(plan.bytes.offset, plan.bytes.size);
    for (uint32_t i = plan.first; i < plan.end; ++i) {
      if (!plan.sample_bytes(buffer, index.samples[i])) index_fail(who, "sample not in its read plan");
    }
    next = plan.end;
  }
  for (uint32_t ms : {0u, 1000u, 0xFFFFFFFFu}) {
    if (n > 0 && index.seek(ms) >= n) index_fail(who, "seek past the samples");
  }
}

// Indexer: FlvIndexer or Mp4Demuxer (constructed with the file's size; next_request, feed, done,
// finish).
template <class Indexer>
void check_index_in_pieces(const char* who, std::span<const uint8_t> file, const media::vod::MediaIndex& whole) {
  Indexer indexer(file.size());
  while (!indexer.done()) {
    const media::vod::ByteRange need = indexer.next_request();
    if (need.end() > file.size()) index_fail(who, "request past the end of the file");
    if (!indexer.feed(need.offset, file.subspan(need.offset, need.size))) index_fail(who, "piecewise feed failed");
  }
  auto pieces = indexer.finish();
  if (!pieces) index_fail(who, "piecewise finish failed");
  if (pieces->samples.size() != whole.samples.size() || pieces->metadata != whole.metadata) {
    index_fail(who, "piecewise index differs");
  }
}

}  // namespace sluice::fuzz
