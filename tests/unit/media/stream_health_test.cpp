// media/stream_health: frames per second from media time, bitrate over 1 s and 10 s of arrivals,
// keyframe intervals, idle time, timestamps going back, A/V drift, publish starts and takeovers.
#include "media/stream_health.hpp"

#include <doctest/doctest.h>

#include <vector>

using namespace sluice;
using namespace sluice::media;

namespace {

FramePtr video(uint32_t ts, size_t bytes, bool key) {
  std::vector<uint8_t> b(bytes, 0);
  b[0] = key ? 0x17 : 0x27;
  if (bytes > 1) b[1] = 1;
  return make_frame(9, ts, Slice::adopt(std::move(b)));
}

FramePtr audio(uint32_t ts, size_t bytes) {
  std::vector<uint8_t> b(bytes, 0);
  b[0] = 0xAF;
  if (bytes > 1) b[1] = 1;
  return make_frame(8, ts, Slice::adopt(std::move(b)));
}

}  // namespace

TEST_CASE("30 fps with a keyframe every 2 s at 2 Mb/s: the figures say so; silence shows as idle time") {
  StreamHealth h;
  h.on_publish_start(false);
  // 12 s of 30 fps video, 8333 bytes a frame (2 Mb/s), arriving on time from t = 1000 ms; the
  // media clock starts at 5000 (a stream's timestamps need not start at 0).
  for (int i = 0; i < 360; ++i) {
    const uint32_t ts = 5000 + static_cast<uint32_t>(i * 1000 / 30);
    h.on_frame(*video(ts, 8333, i % 60 == 0), 1000 + static_cast<uint64_t>(i) * 1000 / 30);
  }
  const uint64_t now = 1000 + 359 * 1000 / 30;
  StreamHealth::Figures f = h.figures(now);
  CHECK(f.video.present);
  CHECK_FALSE(f.audio.present);
  CHECK(f.video.fps == doctest::Approx(30).epsilon(0.01));
  CHECK(f.video.kbps_10s == doctest::Approx(2000).epsilon(0.01));
  CHECK(f.video.kbps_1s == doctest::Approx(2000).epsilon(0.05));
  CHECK(f.video.keyframe_interval_last_ms == 2000);
  CHECK(f.video.keyframe_interval_mean_ms == 2000);
  CHECK(f.video.keyframe_interval_max_ms == 2000);
  CHECK(f.video.idle_ms == 0);
  CHECK(f.video.frames == 360);
  CHECK(f.publish_starts == 1);
  f = h.figures(now + 3000);  // the encoder went quiet
  CHECK(f.video.idle_ms == 3000);
  CHECK(f.video.kbps_1s == 0);
  CHECK(f.video.fps == 0);  // no current rate once frames stop
}

TEST_CASE("a long GOP raises the max; timestamps going back are counted; jumps and takeovers") {
  StreamHealth h;
  h.on_publish_start(false);
  uint64_t now = 0;
  for (uint32_t ts : {0u, 2000u, 12000u, 14000u}) h.on_frame(*video(ts, 100, true), now += 100);
  h.on_frame(*video(13990, 100, false), now += 10);  // stamped before the one before it
  h.on_timestamp_jump();
  h.on_publish_start(true);
  const StreamHealth::Figures f = h.figures(now);
  CHECK(f.video.keyframe_interval_last_ms == 2000);
  CHECK(f.video.keyframe_interval_max_ms == 10000);
  CHECK(f.video.keyframe_interval_mean_ms == 14000 / 3);
  CHECK(f.video.backwards == 1);
  CHECK(f.timestamp_jumps == 1);
  CHECK(f.publish_starts == 2);
  CHECK(f.takeovers == 1);
}

TEST_CASE("A/V drift: audio stamped 200 ms ahead of video for the same arrival shows as +200") {
  StreamHealth h;
  h.on_publish_start(false);
  for (int i = 0; i < 200; ++i) {
    const uint64_t now = 1000 + static_cast<uint64_t>(i) * 20;
    const uint32_t ts = static_cast<uint32_t>(i) * 20;
    if (i % 2 == 0) h.on_frame(*video(ts, 500, i == 0), now);
    h.on_frame(*audio(ts + 200, 300), now);
  }
  const StreamHealth::Figures f = h.figures(1000 + 199 * 20);
  REQUIRE(f.av_drift_ms.has_value());
  CHECK(*f.av_drift_ms == 200);
  CHECK(f.audio.fps == doctest::Approx(50).epsilon(0.01));
  CHECK(f.video.fps == doctest::Approx(25).epsilon(0.01));
  // Sequence headers are not media.
  std::vector<uint8_t> sh = {0xAF, 0x00, 0x12, 0x10};
  h.on_frame(*make_frame(8, 0, Slice::adopt(std::move(sh))), 5000);
  CHECK(h.figures(5000).audio.frames == 200);
}
