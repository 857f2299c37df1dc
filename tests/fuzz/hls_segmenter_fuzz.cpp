// The HLS Segmenter (media/hls/segmenter.hpp) and its playlist (media/hls/playlist.hpp) driven by
// arbitrary sequences of samples, codec changes, republishes and ends: no crash, no read out of
// bounds, and the promises the playlists make hold after every step (RFC 8216 / 8216bis):
// sequence numbers consecutive, every complete segment within the target duration (rounded up), a
// complete segment's parts adding up to it, memory within the window, and the rendered playlist's
// EXTINF lines never above EXT-X-TARGETDURATION.
//
// Input:
//   byte 0    bits 0-1 container (0 fMP4 LL, 1 fMP4, 2 MPEG-TS, 3 fMP4 LL), bit 2 no video,
//             bit 3 no audio, bits 4-7 the segment target in s (1..16)
//   then records of 4 bytes: op, dts step (ms, s16be: a publisher's clock may go back), size byte
//     op & 7: 0-3 video sample (bit 3 of op: keyframe), 4-5 audio sample, 6 a new setup (the other
//     of two valid AVC configurations) or the same one, 7 a republish (bit 3: finish first)
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "media/hls/playlist.hpp"
#include "media/hls/segmenter.hpp"

using namespace sluice;
using namespace sluice::media::hls;

namespace {

constexpr size_t kMaxOps = 2048;
constexpr uint64_t kTicksPerMs = 90;

void check(bool ok) {
  if (!ok) std::abort();
}

StreamSetup setup_for(bool video, bool audio, bool alternate) {
  StreamSetup s;
  if (video) {
    s.video.codec = Codec::Avc;
    s.video.config = {0x01,
                      0x64,
                      0x00,
                      0x1E,
                      0xFF,
                      0xE1,
                      0x00,
                      0x04,
                      0x67,
                      0x64,
                      0x00,
                      0x1E,
                      0x01,
                      0x00,
                      0x02,
                      0x68,
                      static_cast<uint8_t>(alternate ? 0xEF : 0xEE)};
    s.video.width = 320;
    s.video.height = 240;
  }
  if (audio) {
    s.audio.codec = Codec::Aac;
    s.audio.config = {0x11, 0x90};
    s.audio.sample_rate = 48000;
    s.audio.channels = 2;
    s.audio.object_type = 2;
  }
  return s;
}

void check_invariants(const Segmenter& seg, const Segmenter::Options& o) {
  const auto& segments = seg.segments();
  const uint64_t target = seg.target_duration_s();
  for (size_t i = 0; i < segments.size(); ++i) {
    const Segment& s = segments[i];
    if (i > 0) check(s.msn == segments[i - 1].msn + 1);
    uint64_t parts = 0;
    for (const Part& p : s.parts) parts += p.duration;
    if (s.complete) check(parts == s.duration);
    if (s.complete) check((s.duration + 90000 - 1) / 90000 <= target);
  }
  size_t complete = 0;
  for (const Segment& s : segments) complete += s.complete ? 1 : 0;
  check(complete <= o.window + 2);

  std::vector<Segment> copy;
  for (const Segment& s : segments) copy.push_back(clone(s));
  PlaylistParams p;
  p.container = o.container;
  p.low_latency = o.part_ms != 0;
  p.part_ms = o.part_ms;
  p.window = o.window;
  p.target_s = seg.target_duration_s();
  p.discontinuity_sequence = seg.discontinuity_sequence();
  const std::string text = render_playlist(copy, p);
  // Every EXTINF, rounded to the nearest second, is at most the target duration (RFC 8216 4.3.3.1).
  for (size_t at = text.find("#EXTINF:"); at != std::string::npos; at = text.find("#EXTINF:", at + 1)) {
    const double d = std::strtod(text.c_str() + at + 8, nullptr);
    check(static_cast<uint64_t>(d + 0.5) <= target);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const uint8_t head = data[0];
  static constexpr Container kContainer[] = {Container::Fmp4, Container::Fmp4, Container::MpegTs, Container::Fmp4};
  Segmenter::Options o;
  o.container = kContainer[head & 3];
  o.part_ms = (head & 3) == 0 || (head & 3) == 3 ? 200 : 0;
  o.segment_ms = 1000 * (1 + (head >> 4));
  o.window = 3;
  const bool video = (head & 4) == 0;
  const bool audio = (head & 8) == 0 || !video;
  Segmenter seg(o);
  bool alternate = false;
  seg.set_setup(setup_for(video, audio, alternate));

  int64_t dts_ms = 100000;
  int64_t now = 1'700'000'000'000;
  std::vector<uint8_t> payload(260, 0x42);
  payload[0] = payload[1] = payload[2] = 0;
  for (size_t i = 1, ops = 0; i + 4 <= size && ops < kMaxOps; i += 4, ++ops) {
    const uint8_t op = data[i];
    dts_ms += static_cast<int16_t>(static_cast<uint16_t>(data[i + 1] << 8 | data[i + 2]));
    if (dts_ms < 0) dts_ms = 0;
    now += 40;
    const size_t n = 1 + data[i + 3];
    switch (op & 7) {
      case 0:
      case 1:
      case 2:
      case 3:
      case 4:
      case 5: {
        Sample s;
        s.video = (op & 7) < 4;
        s.keyframe = !s.video || (op & 8) != 0;
        s.dts = static_cast<uint64_t>(dts_ms) * kTicksPerMs;
        s.cts = s.video ? static_cast<int32_t>(op >> 4) * 40 * 90 : 0;
        // Video: one NAL unit behind a 4-byte length (what the part writers expect), sometimes wrong.
        if (s.video) payload[3] = static_cast<uint8_t>((op & 0x80) != 0 ? n : (n > 4 ? n - 4 : 0));
        s.data = std::span<const uint8_t>(payload.data(), n);
        seg.push(s, Slice(), now);
        break;
      }
      case 6:
        if (op & 8) alternate = !alternate;
        seg.set_setup(setup_for(video, audio, alternate));
        break;
      case 7:
        if (op & 8) seg.finish();
        seg.mark_discontinuity();
        break;
    }
    check_invariants(seg, o);
  }
  seg.finish();
  check_invariants(seg, o);
  return 0;
}
