// Segmenter: segments start at keyframes and follow the GOP, the target duration is never
// exceeded, parts stay within the part target, the timeline survives a republish, and memory
// stays within the window.
#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include "media/hls/segmenter.hpp"

using namespace sluice;
using namespace sluice::media::hls;

namespace {

constexpr uint64_t kMs = 90;  // ticks per ms

StreamSetup av_setup(bool video = true, bool audio = true) {
  StreamSetup s;
  if (video) {
    s.video.codec = Codec::Avc;
    // avcC: version 1, High profile, level 3.0, 4-byte lengths, one SPS, one PPS.
    s.video.config = {0x01, 0x64, 0x00, 0x1E, 0xFF, 0xE1, 0x00, 0x04, 0x67,
                      0x64, 0x00, 0x1E, 0x01, 0x00, 0x02, 0x68, 0xEE};
    s.video.width = 320;
    s.video.height = 240;
  }
  if (audio) {
    s.audio.codec = Codec::Aac;
    s.audio.config = {0x11, 0x90};  // AAC-LC, 48 kHz, stereo
    s.audio.sample_rate = 48000;
    s.audio.channels = 2;
    s.audio.object_type = 2;
  }
  return s;
}

struct Feed {
  Segmenter& seg;
  std::vector<uint8_t> nal = {0, 0, 0, 2, 0x65, 0x88};  // one 2-byte NAL unit
  std::vector<uint8_t> aac = {0x21, 0x10, 0x04};
  int64_t now = 1'700'000'000'000;

  void video(uint64_t ms, bool key) {
    Sample s;
    s.video = true;
    s.keyframe = key;
    s.dts = ms * kMs;
    s.data = nal;
    seg.push(s, Slice(), now + int64_t(ms));
  }
  void audio(uint64_t ms) {
    Sample s;
    s.video = false;
    s.keyframe = true;
    s.dts = ms * kMs;
    s.data = aac;
    seg.push(s, Slice(), now + int64_t(ms));
  }
  // 25 fps video with a keyframe every gop_ms, and 48 kHz AAC (21.333 ms frames), interleaved by
  // time, over [from, to).
  void av(uint64_t from, uint64_t to, uint64_t gop_ms, bool with_audio = true) {
    uint64_t v = from;
    double a = double(from);
    while (v < to || (with_audio && a < double(to))) {
      if (!with_audio || double(v) <= a) {
        if (v < to) video(v, (v - from) % gop_ms == 0);
        v += 40;
        if (v >= to && (!with_audio || a >= double(to))) break;
      } else {
        audio(uint64_t(a));
        a += 1024.0 * 1000 / 48000;
      }
    }
  }
};

std::vector<const Segment*> complete(const Segmenter& s) {
  std::vector<const Segment*> out;
  for (const Segment& seg : s.segments()) {
    if (seg.complete) out.push_back(&seg);
  }
  return out;
}

}  // namespace

TEST_CASE("segments end at the first keyframe at or after the target and never exceed the target duration") {
  Segmenter seg({Container::Fmp4, 2000, 0, 6, 1000});
  seg.set_setup(av_setup());
  Feed f{seg};
  f.av(0, 9000, 1000);
  auto done = complete(seg);
  REQUIRE(done.size() >= 4);
  for (const Segment* s : done) {
    CHECK(s->duration == 2000 * kMs);
    CHECK(s->start % (1000 * kMs) == 0);
    CHECK(s->parts.size() == 1);
    CHECK(s->parts.front().independent);
  }
  CHECK(seg.target_duration_s() == 2);
  CHECK(seg.inits().size() == 1);
}

TEST_CASE("a GOP longer than the target makes longer segments and a larger target duration") {
  Segmenter seg({Container::Fmp4, 2000, 0, 6, 1000});
  seg.set_setup(av_setup());
  Feed f{seg};
  f.av(0, 12500, 3000);
  auto done = complete(seg);
  REQUIRE(done.size() >= 3);
  for (const Segment* s : done) {
    CHECK(s->duration == 3000 * kMs);
    CHECK((s->duration + kClock - 1) / kClock <= seg.target_duration_s());
  }
  CHECK(seg.target_duration_s() == 3);
}

TEST_CASE("frames before the first keyframe are dropped; the first segment starts on it") {
  Segmenter seg({Container::MpegTs, 2000, 0, 6, 1000});
  seg.set_setup(av_setup());
  Feed f{seg};
  for (uint64_t t = 0; t < 400; t += 40) f.video(t, false);
  f.av(400, 5000, 1000);
  REQUIRE(!seg.segments().empty());
  CHECK(seg.segments().front().start == 400 * kMs);
  CHECK(seg.segments().front().msn == 0);
}

TEST_CASE("parts stay within the part target, add up to their segment and are independent on keyframes") {
  Segmenter seg({Container::Fmp4, 2000, 200, 6, 1000});
  seg.set_setup(av_setup());
  Feed f{seg};
  f.av(0, 8500, 1000);
  auto done = complete(seg);
  REQUIRE(done.size() >= 3);
  for (const Segment* s : done) {
    uint64_t sum = 0;
    for (size_t i = 0; i < s->parts.size(); ++i) {
      const Part& p = s->parts[i];
      CHECK(p.duration <= 200 * kMs);
      CHECK(p.start == s->start + sum);
      sum += p.duration;
      // Keyframes every second: parts 0 and 5 of a 2 s segment start on one.
      CHECK(p.independent == (i == 0 || i == 5));
      CHECK(p.bytes.size() > 0);
    }
    CHECK(sum == s->duration);
    CHECK(s->parts.size() == 10);
  }
  CHECK(seg.longest_part() <= 200 * kMs);
  // The segment being written has its parts already.
  CHECK(!seg.segments().back().complete);
}

// The publisher leaves (finish) wherever its stream happens to end: the last part ends where the
// later track ends, and when the audio's last frame reaches past the part target the part is cut
// once more at the last video frame, so no part is longer than the target (an LL-HLS player may
// refuse a playlist with one). Every end point of a 240 ms stretch is tried.
TEST_CASE("the last part before the publisher leaves stays within the part target") {
  for (uint64_t to = 4000; to < 4240; ++to) {
    CAPTURE(to);
    Segmenter seg({Container::Fmp4, 2000, 200, 6, 1000});
    seg.set_setup(av_setup());
    Feed f{seg};
    f.av(0, to, 1000);
    seg.finish();
    uint64_t end = 0;
    for (const Segment& s : seg.segments()) {
      uint64_t sum = 0;
      for (const Part& p : s.parts) {
        CHECK(p.duration <= 200 * kMs);
        CHECK(p.start == s.start + sum);
        CHECK(p.bytes.size() > 0);
        sum += p.duration;
      }
      CHECK(sum == s.duration);
      end = s.start + s.duration;
    }
    CHECK(seg.longest_part() <= 200 * kMs);
    // The next publication still continues where this one ended.
    seg.mark_discontinuity();
    f.av(0, 3000, 1000);
    const Segment* next = nullptr;
    for (const Segment& s : seg.segments()) {
      if (s.discontinuity) next = &s;
    }
    REQUIRE(next != nullptr);
    CHECK(next->start == end);
  }
}

TEST_CASE("a part waits for the audio to reach its end, unless the audio stalls") {
  Segmenter seg({Container::Fmp4, 2000, 200, 6, 1000});
  seg.set_setup(av_setup());
  Feed f{seg};
  f.av(0, 1000, 1000);
  const uint64_t before = seg.version();
  // Video alone for 0.6 s: its parts wait for audio ...
  for (uint64_t t = 1000; t < 1600; t += 40) f.video(t, false);
  CHECK(seg.version() == before);
  // ... until the video is a second past a cut.
  for (uint64_t t = 1600; t < 2400; t += 40) f.video(t, t == 2000);
  CHECK(seg.version() > before);
}

TEST_CASE("audio-only streams are cut by time") {
  Segmenter seg({Container::MpegTs, 2000, 0, 6, 1000});
  seg.set_setup(av_setup(false, true));
  Feed f{seg};
  for (double a = 0; a < 9000; a += 1024.0 * 1000 / 48000) f.audio(uint64_t(a));
  auto done = complete(seg);
  REQUIRE(done.size() >= 3);
  for (const Segment* s : done) {
    CHECK(s->duration >= 2000 * kMs);
    CHECK(s->duration < 2030 * kMs);
  }
}

TEST_CASE("a republish continues the timeline with a discontinuity; sequence numbers only grow") {
  Segmenter seg({Container::Fmp4, 2000, 200, 6, 1000});
  seg.set_setup(av_setup());
  Feed f{seg};
  f.av(0, 5000, 1000);
  seg.finish();
  REQUIRE(seg.segments().back().complete);
  const uint64_t end = seg.segments().back().start + seg.segments().back().duration;
  const uint64_t last_msn = seg.segments().back().msn;
  seg.mark_discontinuity();
  seg.set_setup(av_setup());  // the same setup again: no new initialization segment
  f.av(0, 5000, 1000);        // the new publisher's clock starts at 0 again
  const Segment* next = nullptr;
  for (const Segment& s : seg.segments()) {
    if (s.msn == last_msn + 1) next = &s;
  }
  REQUIRE(next != nullptr);
  CHECK(next->discontinuity);
  CHECK(next->start == end);
  CHECK(seg.inits().size() == 1);
  uint64_t prev = 0;
  bool first = true;
  for (const Segment& s : seg.segments()) {
    if (!first) CHECK(s.msn == prev + 1);
    prev = s.msn;
    first = false;
  }
}

TEST_CASE("a muxer that joins a live stream opens without a discontinuity") {
  // What a muxer started by the first HLS request sees: the publish announced (or mirrored from
  // another worker) before anything was written, then the configurations one by one, then the GOP.
  Segmenter seg({Container::Fmp4, 2000, 200, 6, 1000});
  seg.mark_discontinuity();
  seg.set_setup(av_setup(true, false));
  seg.mark_discontinuity();
  seg.set_setup(av_setup());
  Feed f{seg};
  f.av(0, 5000, 1000);
  REQUIRE(!complete(seg).empty());
  for (const Segment& s : seg.segments()) CHECK(!s.discontinuity);
  CHECK(seg.discontinuity_sequence() == 0);
  CHECK(seg.segments().front().msn == 0);
  CHECK(seg.segments().front().start == 0);
}

TEST_CASE("program date-time follows the newest frame of a replayed GOP, not the replay's moment") {
  Segmenter seg({Container::Fmp4, 2000, 200, 6, 1000});
  seg.set_setup(av_setup(true, false));
  Feed f{seg};
  const int64_t replay_at = f.now;
  // The cached GOP (0..1960 ms) arrives in one burst at replay_at: the frame at 1960 ms was live
  // then, so the segment starting at 0 went live about 1960 ms earlier.
  for (uint64_t t = 0; t < 2000; t += 40) {
    f.now = replay_at - int64_t(t);
    f.video(t, t == 0);
  }
  // Then frames arrive live, one every 40 ms of wall time.
  f.now = replay_at - 1960;
  for (uint64_t t = 2000; t < 6000; t += 40) f.video(t, t % 2000 == 0);
  auto done = complete(seg);
  REQUIRE(done.size() >= 2);
  CHECK(done[0]->pdt_ms == replay_at - 1960);
  CHECK(done[1]->pdt_ms == done[0]->pdt_ms + 2000);
}

TEST_CASE("a republish takes its program date-time from the new publisher's frames") {
  Segmenter seg({Container::Fmp4, 2000, 0, 6, 1000});
  seg.set_setup(av_setup(true, false));
  Feed f{seg};
  for (uint64_t t = 0; t < 4000; t += 40) f.video(t, t % 2000 == 0);
  seg.finish();
  const uint64_t last_msn = seg.segments().back().msn;
  seg.mark_discontinuity();
  f.now += 60'000;  // the new publisher comes a minute later, its clock at 0 again
  for (uint64_t t = 0; t < 4000; t += 40) f.video(t, t % 2000 == 0);
  const Segment* next = nullptr;
  for (const Segment& s : seg.segments()) {
    if (s.msn == last_msn + 1) next = &s;
  }
  REQUIRE(next != nullptr);
  CHECK(next->discontinuity);
  CHECK(next->pdt_ms == f.now);
}

TEST_CASE("a different setup mid-stream ends the segment and starts a new initialization segment") {
  Segmenter seg({Container::Fmp4, 2000, 0, 6, 1000});
  seg.set_setup(av_setup());
  Feed f{seg};
  f.av(0, 3000, 1000);
  StreamSetup other = av_setup();
  other.video.config.back() = 0xEF;
  seg.set_setup(other);
  f.av(3000, 8000, 1000);
  bool found = false;
  for (const Segment& s : seg.segments()) {
    if (s.init_id == 2) {
      if (!found) CHECK(s.discontinuity);
      found = true;
    }
  }
  CHECK(found);
  CHECK(seg.inits().size() == 2);
}

TEST_CASE("memory holds the window and one more complete segment") {
  Segmenter seg({Container::MpegTs, 2000, 0, 3, 1000});
  seg.set_setup(av_setup());
  Feed f{seg};
  f.av(0, 40000, 1000);
  CHECK(complete(seg).size() == 4);
  CHECK(seg.segments().front().msn > 0);
  uint64_t held = 0;
  for (const Segment& s : seg.segments()) held += s.bytes;
  CHECK(held == seg.bytes_held());
}
