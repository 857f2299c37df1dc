// Every media codec parser and make_frame on arbitrary bytes: no crash, no read out of bounds,
// and every track a tag parser reports lies inside the input.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "media/codec/aac.hpp"
#include "media/codec/avc.hpp"
#include "media/codec/flv_audio.hpp"
#include "media/codec/flv_video.hpp"
#include "media/codec/hevc.hpp"
#include "media/codec_info.hpp"
#include "media/frame.hpp"
#include "media/script_data.hpp"

using namespace sluice;
using namespace sluice::media;

namespace {

void check_tracks(const TrackList& tracks, size_t size) {
  for (size_t i = 0; i < tracks.stored; ++i) {
    const TrackData& t = tracks.items[i];
    if (t.data_offset > size || t.data_size > size - t.data_offset) std::abort();
  }
}

void parse_all(std::span<const uint8_t> in) {
  if (auto v = parse_video_tag(in)) check_tracks(v->tracks, in.size());
  if (auto a = parse_audio_tag(in)) check_tracks(a->tracks, in.size());
  (void)parse_avc_sps(in);
  (void)parse_avc_config(in);
  (void)parse_hevc_sps(in);
  (void)parse_hevc_config(in);
  (void)parse_aac_config(in);
  (void)is_set_data_frame_metadata(in);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const uint8_t> in(data, size);
  parse_all(in);
  // The first byte picks the message type, so that all of make_frame's paths are reached with
  // the rest as payload, including the stats that parse configuration records.
  if (size == 0) return 0;
  static constexpr uint8_t kTypes[] = {8, 9, 18, 15};
  const auto payload = sluice::Slice::copy_of(in.subspan(1));
  FramePtr f = make_frame(kTypes[data[0] & 3], 0, payload.share());
  if (f->payload.size() > payload.size()) std::abort();
  CodecInfo info;
  info.update(*f);
  (void)info.summary();
  return 0;
}
