// libFuzzer target for the VOD MP4 demuxer: arbitrary bytes as a whole file.
// Properties: no crash, sanitizer report or oversized allocation (run with -rss_limit_mb); every
// sample lies inside the file and converts to a tag body; samples are in decode order; keyframe
// entries point at keyframes; and demuxing with only the bytes the demuxer asks for gives the same
// index as handing it the whole file (media_index_checks.hpp).
#include <cstddef>
#include <cstdint>
#include <span>

#include "media/vod/mp4_demuxer.hpp"
#include "tests/fuzz/media_index_checks.hpp"

using namespace sluice;
using namespace sluice::media::vod;

namespace {

constexpr const char* kWho = "mp4 demuxer";

void exercise(const MediaIndex& index, std::span<const uint8_t> file) {
  fuzz::check_index(kWho, index, file);
  uint32_t last_dts = 0;
  for (const Sample& s : index.samples) {
    if (s.dts_ms < last_dts) fuzz::index_fail(kWho, "samples not in decode order");
    last_dts = s.dts_ms;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const uint8_t> file(data, size);
  auto index = demux_mp4(file);
  if (!index) return 0;
  exercise(*index, file);
  fuzz::check_index_in_pieces<Mp4Demuxer>(kWho, file, *index);
  return 0;
}
