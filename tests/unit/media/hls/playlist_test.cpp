// Playlists: the tags RFC 8216 and 8216bis ask for, in order; the window; delta updates;
// blocking-reload answers; media names.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "media/hls/playlist.hpp"

using namespace sluice;
using namespace sluice::media::hls;

namespace {

Segment seg(uint64_t msn, uint64_t start_ms, uint64_t ms, size_t parts, bool complete = true) {
  Segment s;
  s.msn = msn;
  s.start = start_ms * 90;
  s.duration = ms * 90;
  s.complete = complete;
  s.init_id = 1;
  s.pdt_ms = 1764698400000 + int64_t(start_ms);  // 2025-12-02T18:00:00.000Z
  for (size_t i = 0; i < parts; ++i) {
    Part p;
    p.start = s.start + i * (ms / (parts ? parts : 1)) * 90;
    p.duration = uint32_t(ms / parts * 90);
    p.independent = i == 0;
    s.parts.push_back(std::move(p));
  }
  return s;
}

bool has_line(const std::string& text, const std::string& line) {
  return text.find("\n" + line + "\n") != std::string::npos;
}

}  // namespace

TEST_CASE("iso8601_utc") {
  CHECK(iso8601_utc(0) == "1970-01-01T00:00:00.000Z");
  CHECK(iso8601_utc(1764698400123) == "2025-12-02T18:00:00.123Z");
  CHECK(iso8601_utc(951782400000) == "2000-02-29T00:00:00.000Z");
}

TEST_CASE("a standard MPEG-TS playlist lists the last `window` complete segments") {
  std::vector<Segment> segs;
  for (uint64_t i = 0; i < 5; ++i) segs.push_back(seg(i, i * 2000, 2000, 1));
  segs.push_back(seg(5, 10000, 0, 0, false));
  PlaylistParams p;
  p.container = Container::MpegTs;
  p.window = 3;
  p.target_s = 2;
  const std::string text = render_playlist(segs, p);
  CHECK(text.starts_with("#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:2\n"));
  CHECK(has_line(text, "#EXT-X-MEDIA-SEQUENCE:2"));
  CHECK(has_line(text, "seg2.ts"));
  CHECK(has_line(text, "seg4.ts"));
  CHECK(text.find("seg1.ts") == std::string::npos);
  CHECK(text.find("seg5") == std::string::npos);
  CHECK(has_line(text, "#EXTINF:2.000,"));
  CHECK(has_line(text, "#EXT-X-PROGRAM-DATE-TIME:2025-12-02T18:00:04.000Z"));
  CHECK(text.find("EXT-X-MAP") == std::string::npos);
  CHECK(text.find("EXT-X-PART") == std::string::npos);
  CHECK(text.find("ENDLIST") == std::string::npos);
}

TEST_CASE("a low-latency playlist has server control, parts, a map and a preload hint; query in every URI") {
  std::vector<Segment> segs;
  for (uint64_t i = 0; i < 4; ++i) segs.push_back(seg(10 + i, i * 2000, 2000, 10));
  segs.push_back(seg(14, 8000, 600, 3, false));
  PlaylistParams p;
  p.container = Container::Fmp4;
  p.low_latency = true;
  p.part_ms = 200;
  p.window = 6;
  p.target_s = 2;
  p.query = "key=abc";
  const std::string text = render_playlist(segs, p);
  CHECK(has_line(text, "#EXT-X-VERSION:9"));
  CHECK(has_line(text, "#EXT-X-SERVER-CONTROL:CAN-BLOCK-RELOAD=YES,CAN-SKIP-UNTIL=12.000,PART-HOLD-BACK=0.600"));
  CHECK(has_line(text, "#EXT-X-PART-INF:PART-TARGET=0.200"));
  CHECK(has_line(text, "#EXT-X-MEDIA-SEQUENCE:10"));
  CHECK(has_line(text, "#EXT-X-MAP:URI=\"init1.mp4?key=abc\""));
  CHECK(has_line(text, "seg13.m4s?key=abc"));
  CHECK(has_line(text, "#EXT-X-PART:DURATION=0.200,URI=\"part14.0.m4s?key=abc\",INDEPENDENT=YES"));
  CHECK(has_line(text, "#EXT-X-PART:DURATION=0.200,URI=\"part14.2.m4s?key=abc\""));
  CHECK(has_line(text, "#EXT-X-PRELOAD-HINT:TYPE=PART,URI=\"part14.3.m4s?key=abc\""));
  // Parts are listed for the segments near the end only (three target durations).
  CHECK(text.find("part10.") == std::string::npos);
  CHECK(text.find("part12.0.m4s") != std::string::npos);
  // The segment being written has no EXTINF yet.
  CHECK(text.find("seg14") == std::string::npos);
}

TEST_CASE("a delta update skips the segments older than CAN-SKIP-UNTIL, never past a discontinuity") {
  std::vector<Segment> segs;
  for (uint64_t i = 0; i < 12; ++i) segs.push_back(seg(i, i * 2000, 2000, 10));
  segs.push_back(seg(12, 24000, 400, 2, false));
  PlaylistParams p;
  p.low_latency = true;
  p.part_ms = 200;
  p.window = 12;
  p.target_s = 2;
  p.skip = true;
  std::string text = render_playlist(segs, p);
  // The end is 24.4 s; CAN-SKIP-UNTIL 12 s: segments ending before 12.4 s go (0..5).
  CHECK(has_line(text, "#EXT-X-SKIP:SKIPPED-SEGMENTS=6"));
  CHECK(text.find("seg5.m4s") == std::string::npos);
  CHECK(has_line(text, "seg6.m4s"));
  CHECK(has_line(text, "#EXT-X-MEDIA-SEQUENCE:0"));
  segs[3].discontinuity = true;
  text = render_playlist(segs, p);
  CHECK(has_line(text, "#EXT-X-SKIP:SKIPPED-SEGMENTS=2"));
  CHECK(has_line(text, "#EXT-X-DISCONTINUITY"));
}

TEST_CASE("discontinuities dropped with the window count in the discontinuity sequence") {
  std::vector<Segment> segs;
  for (uint64_t i = 0; i < 5; ++i) segs.push_back(seg(i, i * 2000, 2000, 1));
  segs[1].discontinuity = true;
  segs[3].discontinuity = true;
  PlaylistParams p;
  p.window = 3;
  p.discontinuity_sequence = 4;
  const std::string text = render_playlist(segs, p);
  CHECK(has_line(text, "#EXT-X-DISCONTINUITY-SEQUENCE:5"));
  CHECK(has_line(text, "#EXT-X-DISCONTINUITY"));
}

TEST_CASE("block_answer") {
  std::vector<Segment> segs;
  segs.push_back(seg(4, 0, 2000, 10));
  segs.push_back(seg(5, 2000, 2000, 10));
  segs.push_back(seg(6, 4000, 400, 2, false));
  CHECK(block_answer(segs, 3, -1) == BlockAnswer::Ready);
  CHECK(block_answer(segs, 5, -1) == BlockAnswer::Ready);
  CHECK(block_answer(segs, 6, -1) == BlockAnswer::Wait);
  CHECK(block_answer(segs, 6, 1) == BlockAnswer::Ready);
  CHECK(block_answer(segs, 6, 2) == BlockAnswer::Wait);
  CHECK(block_answer(segs, 7, 0) == BlockAnswer::Wait);
  CHECK(block_answer(segs, 8, 0) == BlockAnswer::Wait);
  CHECK(block_answer(segs, 9, 0) == BlockAnswer::BadRequest);
  // Past the last part of a complete segment: the next segment's first part.
  CHECK(block_answer(segs, 5, 10) == BlockAnswer::Ready);
  CHECK(block_answer(segs, 4, 10) == BlockAnswer::Ready);
}

TEST_CASE("block_answer: a part further ahead than the Advance Part Limit is a bad request at once") {
  std::vector<Segment> segs;
  segs.push_back(seg(5, 2000, 2000, 10));
  segs.push_back(seg(6, 4000, 400, 2, false));  // parts 0 and 1 listed
  // 200 ms parts: the limit is 3 s of them, 15 parts past the last one listed (6.1).
  CHECK(block_answer(segs, 6, 16, 200) == BlockAnswer::Wait);
  CHECK(block_answer(segs, 6, 17, 200) == BlockAnswer::BadRequest);
  CHECK(block_answer(segs, 7, 14, 200) == BlockAnswer::Wait);
  CHECK(block_answer(segs, 7, 15, 200) == BlockAnswer::BadRequest);
  CHECK(block_answer(segs, 8, 1000000, 200) == BlockAnswer::BadRequest);
  // 1 s parts (or longer): 3 parts.
  CHECK(block_answer(segs, 6, 4, 1000) == BlockAnswer::Wait);
  CHECK(block_answer(segs, 6, 5, 1000) == BlockAnswer::BadRequest);
  // Without parts (part_ms 0) only the segment rule applies.
  CHECK(block_answer(segs, 7, 1000, 0) == BlockAnswer::Wait);
}

TEST_CASE("parse_media_name") {
  MediaName m;
  REQUIRE(parse_media_name("seg12.m4s", Container::Fmp4, m));
  CHECK((m.kind == MediaName::Kind::Segment && m.msn == 12));
  REQUIRE(parse_media_name("part7.3.ts", Container::MpegTs, m));
  CHECK((m.kind == MediaName::Kind::Part && m.msn == 7 && m.part == 3));
  REQUIRE(parse_media_name("init2.mp4", Container::Fmp4, m));
  CHECK((m.kind == MediaName::Kind::Init && m.msn == 2));
  CHECK_FALSE(parse_media_name("seg12.ts", Container::Fmp4, m));
  CHECK_FALSE(parse_media_name("init2.mp4", Container::MpegTs, m));
  CHECK_FALSE(parse_media_name("seg.m4s", Container::Fmp4, m));
  CHECK_FALSE(parse_media_name("seg-1.m4s", Container::Fmp4, m));
  CHECK_FALSE(parse_media_name("part1.m4s", Container::Fmp4, m));
  CHECK_FALSE(parse_media_name("seg99999999999999999999.m4s", Container::Fmp4, m));
  CHECK_FALSE(parse_media_name("../seg1.m4s", Container::Fmp4, m));
}
