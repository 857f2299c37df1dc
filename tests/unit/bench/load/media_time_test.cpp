// The bench's media-time reader (bench/load/media_time.hpp) on parts written by the server's own
// part writers (media/hls/part_writer.hpp): the start it reads is the first sample's decode time,
// for fMP4 (tfdt) and MPEG-TS (the first video PES, else audio; 33-bit DTS), and garbage gives none.
#include <doctest/doctest.h>

#include <vector>

#include "bench/load/media_time.hpp"
#include "media/hls/part_writer.hpp"

using namespace sluice;
using namespace sluice::bench;
using namespace sluice::media::hls;

namespace {

StreamSetup av_setup(bool video) {
  StreamSetup s;
  if (video) {
    s.video.codec = Codec::Avc;
    s.video.config = {0x01, 0x64, 0x00, 0x1E, 0xFF, 0xE1, 0x00, 0x04, 0x67,
                      0x64, 0x00, 0x1E, 0x01, 0x00, 0x02, 0x68, 0xEE};
    s.video.width = 320;
    s.video.height = 240;
  }
  s.audio.codec = Codec::Aac;
  s.audio.config = {0x11, 0x90};
  s.audio.sample_rate = 48000;
  s.audio.channels = 2;
  s.audio.object_type = 2;
  return s;
}

struct Part {
  std::vector<uint8_t> nal = {0, 0, 0, 2, 0x65, 0x88};
  std::vector<uint8_t> aac = {0x21, 0x10, 0x04};
  std::vector<Sample> video, audio;
  Part(uint64_t first_ms, bool with_video) {
    for (int i = 0; i < 5; ++i) {
      if (with_video) {
        Sample v;
        v.video = true;
        v.keyframe = i == 0;
        v.dts = (first_ms + uint64_t(i) * 40) * 90;
        v.duration = 40 * 90;
        v.data = nal;
        video.push_back(v);
      }
      Sample a;
      a.keyframe = true;
      a.dts = (first_ms + 5 + uint64_t(i) * 21) * 90;  // audio a little after the video
      a.duration = 1920;
      a.data = aac;
      audio.push_back(a);
    }
  }
};

}  // namespace

TEST_CASE("fMP4: the smallest tfdt of the fragment") {
  PartWriter w(Container::Fmp4, av_setup(true));
  Part p(123456, true);
  auto bytes = w.part(p.video, p.audio, true);
  auto start = fmp4_media_start(bytes);
  REQUIRE(start);
  CHECK(start->ticks == 123456 * 90);
  CHECK(start->ms() == 123456);
  CHECK_FALSE(fmp4_media_start(std::vector<uint8_t>(64, 0xAB)));
}

TEST_CASE("MPEG-TS: the first video PES's DTS, else the audio's, 33 bits") {
  PartWriter w(Container::MpegTs, av_setup(true));
  Part p(5000, true);
  auto start = ts_media_start(w.part(p.video, p.audio, true));
  REQUIRE(start);
  CHECK(start->video);
  CHECK(start->ticks == 5000 * 90);

  PartWriter audio_only(Container::MpegTs, av_setup(false));
  Part a(7000, false);
  start = ts_media_start(audio_only.part({}, a.audio, true));
  REQUIRE(start);
  CHECK_FALSE(start->video);
  CHECK(start->ticks == 7005 * 90);

  // Past 2^33 ticks (26.5 hours) the DTS wraps; the reader gives the wrapped value.
  PartWriter late(Container::MpegTs, av_setup(true));
  Part w2(95'500'000, true);
  start = ts_media_start(late.part(w2.video, w2.audio, true));
  REQUIRE(start);
  CHECK(start->ticks == (95'500'000ull * 90) % (1ull << 33));
  CHECK_FALSE(ts_media_start(std::vector<uint8_t>(188 * 3, 0x47)));
}
