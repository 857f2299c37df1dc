// server/snapshot/snapshot_params: what a snapshot request may ask, the picture's size, and the
// quality as the MJPEG encoder's quantiser scale.
#include <doctest/doctest.h>

#include "server/snapshot/snapshot_params.hpp"

using namespace sluice::server;

TEST_CASE("width and quality: defaults, bounds, refusals") {
  SnapshotParamsParsed p = parse_snapshot_params(std::nullopt, std::nullopt);
  CHECK(p.error.empty());
  CHECK(p.params.width == 0);
  CHECK(p.params.quality == 80);

  p = parse_snapshot_params(std::string("320"), std::string("95"));
  CHECK(p.error.empty());
  CHECK(p.params.width == 320);
  CHECK(p.params.quality == 95);

  CHECK(parse_snapshot_params(std::string("16"), std::string("1")).error.empty());
  CHECK(parse_snapshot_params(std::string("3840"), std::string("100")).error.empty());
  for (const char* w : {"15", "3841", "", "abc", "-5", "320px", "+320", " 320", "99999999999999999999"}) {
    CAPTURE(w);
    p = parse_snapshot_params(std::string(w), std::nullopt);
    CHECK(p.error.find("width") != std::string::npos);
  }
  for (const char* q : {"0", "101", "", "8.5", "x"}) {
    CAPTURE(q);
    p = parse_snapshot_params(std::nullopt, std::string(q));
    CHECK(p.error.find("quality") != std::string::npos);
  }
}

TEST_CASE("the picture's size keeps the aspect, is even, never grows") {
  auto size = [](uint32_t w, uint32_t h, uint32_t asked) {
    SnapshotSize s = snapshot_size(w, h, asked);
    return std::make_pair(s.width, s.height);
  };
  CHECK(size(1280, 720, 0) == std::make_pair(1280u, 720u));
  CHECK(size(1280, 720, 320) == std::make_pair(320u, 180u));
  CHECK(size(1280, 720, 640) == std::make_pair(640u, 360u));
  CHECK(size(1280, 720, 1920) == std::make_pair(1280u, 720u));  // no upscaling
  CHECK(size(1920, 1080, 101) == std::make_pair(100u, 56u));    // 101 -> 100 even, 56.8 -> 56
  CHECK(size(1921, 1081, 0) == std::make_pair(1920u, 1080u));   // odd source dimensions: even
  CHECK(size(4000, 16, 16) == std::make_pair(16u, 2u));         // at least 2 high
}

TEST_CASE("quality maps onto the MJPEG quantiser scale, monotonically, within 1..31") {
  CHECK(mjpeg_qscale(100) == 1);
  CHECK(mjpeg_qscale(80) == 5);
  CHECK(mjpeg_qscale(50) == 14);
  CHECK(mjpeg_qscale(1) == 31);
  for (uint32_t q = 2; q <= 100; ++q) {
    CAPTURE(q);
    CHECK(mjpeg_qscale(q) <= mjpeg_qscale(q - 1));
  }
}
