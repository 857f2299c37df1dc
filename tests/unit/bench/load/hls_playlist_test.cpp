// The bench's HLS playlist reader (bench/load/hls_playlist.hpp) on playlists as Sluice renders them
// (media/hls/playlist.hpp, from a real Segmenter): what an LL-HLS reader of sluice-bench relies on
// (parts, preload hint, blocking reload, skips, program date-time), URI resolution and the ISO 8601
// dates; and its refusals.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "bench/load/hls_playlist.hpp"
#include "media/hls/playlist.hpp"
#include "media/hls/segmenter.hpp"

using namespace sluice;
using namespace sluice::bench;
using namespace sluice::media::hls;

namespace {

StreamSetup video_setup() {
  StreamSetup s;
  s.video.codec = Codec::Avc;
  s.video.config = {0x01, 0x64, 0x00, 0x1E, 0xFF, 0xE1, 0x00, 0x04, 0x67,
                    0x64, 0x00, 0x1E, 0x01, 0x00, 0x02, 0x68, 0xEE};
  s.video.width = 320;
  s.video.height = 240;
  return s;
}

// 7.5 s of 25 fps video with a keyframe a second, at a known wall clock.
std::vector<Segment> segments_of(Segmenter& seg) {
  seg.set_setup(video_setup());
  std::vector<uint8_t> nal = {0, 0, 0, 2, 0x65, 0x88};
  for (uint64_t ms = 0; ms < 7500; ms += 40) {
    Sample s;
    s.video = true;
    s.keyframe = ms % 1000 == 0;
    s.dts = ms * 90;
    s.data = nal;
    seg.push(s, Slice(), 1'800'000'000'000 + int64_t(ms));
  }
  std::vector<Segment> out;
  for (const Segment& s : seg.segments()) out.push_back(clone(s));
  return out;
}

}  // namespace

TEST_CASE("an LL-HLS playlist of the server reads back: segments, parts, hint, server control, dates") {
  Segmenter seg({Container::Fmp4, 2000, 200, 6, 1000});
  auto segments = segments_of(seg);
  PlaylistParams p;
  p.container = Container::Fmp4;
  p.low_latency = true;
  p.part_ms = 200;
  p.target_s = seg.target_duration_s();
  const std::string text = render_playlist(segments, p);
  std::string error;
  auto pl = parse_media_playlist(text, error);
  REQUIRE_MESSAGE(pl, error);
  CHECK(pl->low_latency());
  CHECK(pl->target_s == 2);
  CHECK(pl->part_target_s == doctest::Approx(0.2));
  CHECK(pl->can_block_reload);
  CHECK(pl->part_hold_back_s == doctest::Approx(3 * 0.2));  // PART-HOLD-BACK: three part targets
  CHECK(pl->media_sequence == segments.front().msn);
  CHECK(!pl->preload_hint_uri.empty());
  CHECK_FALSE(pl->ended);
  size_t complete = 0;
  for (const PlaylistSegment& s : pl->segments) complete += s.complete() ? 1 : 0;
  CHECK(complete == 3);  // 0-2, 2-4, 4-6 s; 6-7.5 s is being written
  const PlaylistSegment& first = pl->segments.front();
  CHECK(first.duration_s == doctest::Approx(2.0));
  CHECK(first.pdt_ms == 1'800'000'000'000);
  CHECK(!first.map_uri.empty());
  const PlaylistSegment& open = pl->segments.back();
  CHECK_FALSE(open.complete());
  CHECK(!open.parts.empty());
  CHECK(open.parts.front().independent);
  CHECK(pl->find(open.msn) == &open);
  CHECK(pl->end_msn() == open.msn + 1);
}

TEST_CASE("a delta update (EXT-X-SKIP) keeps the sequence numbers right") {
  Segmenter seg({Container::Fmp4, 1000, 200, 20, 1000});
  auto segments = segments_of(seg);
  PlaylistParams p;
  p.container = Container::Fmp4;
  p.low_latency = true;
  p.part_ms = 200;
  p.window = 20;
  p.target_s = seg.target_duration_s();
  p.skip = true;
  std::string error;
  PlaylistParams whole = p;
  whole.skip = false;
  auto full = parse_media_playlist(render_playlist(segments, whole), error);
  auto delta = parse_media_playlist(render_playlist(segments, p), error);
  REQUIRE(full);
  REQUIRE(delta);
  CHECK(delta->end_msn() == full->end_msn());
  if (delta->skipped > 0) CHECK(delta->segments.size() + delta->skipped == full->segments.size());
  CHECK(delta->segments.back().msn == full->segments.back().msn);
}

TEST_CASE("an MPEG-TS playlist has no map and no parts") {
  Segmenter seg({Container::MpegTs, 2000, 0, 6, 1000});
  auto segments = segments_of(seg);
  PlaylistParams p;
  p.container = Container::MpegTs;
  p.target_s = seg.target_duration_s();
  std::string error;
  auto pl = parse_media_playlist(render_playlist(segments, p), error);
  REQUIRE(pl);
  CHECK_FALSE(pl->low_latency());
  for (const PlaylistSegment& s : pl->segments) {
    CHECK(s.map_uri.empty());
    CHECK(s.parts.empty());
  }
}

TEST_CASE("refusals, URIs and dates") {
  std::string error;
  CHECK_FALSE(parse_media_playlist("#EXTINF:2,\nseg0.ts\n", error));
  CHECK(!error.empty());
  CHECK_FALSE(parse_media_playlist("#EXTM3U\n#EXT-X-TARGETDURATION:abc\n", error));
  CHECK(resolve_uri("/live/cam/index.m3u8?k=1", "seg1.m4s") == "/live/cam/seg1.m4s");
  CHECK(resolve_uri("/live/cam/index.m3u8", "/other/seg.ts") == "/other/seg.ts");
  CHECK(resolve_uri("/live/cam/index.m3u8", "http://h:8080/x/y.ts") == "/x/y.ts");
  CHECK(parse_iso8601_ms("2026-12-01T14:02:03.456Z") == 1796133723456);
  CHECK(parse_iso8601_ms("2026-12-01T15:02:03.456+01:00") == 1796133723456);
  CHECK(parse_iso8601_ms("yesterday") == -1);
  CHECK(parse_iso8601_ms(iso8601_utc(1'800'000'000'123)) == 1'800'000'000'123);
}
