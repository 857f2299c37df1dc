// libFuzzer target for the VOD FLV indexer: arbitrary bytes as a whole file.
// Properties: no crash or sanitizer report; every indexed sample lies inside the file and becomes
// a tag body; keyframe entries point at keyframes in ascending time; and indexing the file in the
// smallest pieces the indexer asks for gives the same index as indexing it whole
// (media_index_checks.hpp).
#include <cstddef>
#include <cstdint>
#include <span>

#include "media/vod/flv_indexer.hpp"
#include "tests/fuzz/media_index_checks.hpp"

using namespace sluice;
using namespace sluice::media::vod;

namespace {

constexpr const char* kWho = "flv indexer";

void exercise(const MediaIndex& index, std::span<const uint8_t> file) {
  fuzz::check_index(kWho, index, file);
  uint32_t last_time = 0;
  for (const Keyframe& k : index.keyframes) {
    if (k.time_ms < last_time) fuzz::index_fail(kWho, "keyframe times descend");
    last_time = k.time_ms;
  }
  for (uint32_t ms : {0u, 1000u, 0xFFFFFFFFu}) (void)index.last_sequence_header(index.seek(ms), kSampleVideo);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const uint8_t> file(data, size);
  auto index = index_flv(file);
  if (!index) return 0;
  exercise(*index, file);
  fuzz::check_index_in_pieces<FlvIndexer>(kWho, file, *index);
  return 0;
}
