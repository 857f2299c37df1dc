// server/snapshot/jpeg_maker: a keyframe as FLV carries it (an AVC decoder configuration record and
// length-prefixed NAL units), made here by libavcodec's libx264 from a known picture, becomes a JPEG
// of the asked size that decodes back close to that picture; what cannot be decoded says why.
#include <doctest/doctest.h>

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavutil/frame.h>
#include <libavutil/log.h>
}

#include <cmath>
#include <cstring>
#include <vector>

#include "server/snapshot/jpeg_maker.hpp"
#include "unit/server/snapshot/h264_keyframe.hpp"

using namespace sluice::server;
using sluice::test::encode_h264;
using sluice::test::Keyframe;
using sluice::test::kH;
using sluice::test::kW;
using sluice::test::luma;

namespace {

// The JPEG decoded back: its luma plane against the source's (full range back to limited), in dB.
double luma_psnr(const std::vector<uint8_t>& jpeg) {
  const AVCodec* codec = avcodec_find_decoder(AV_CODEC_ID_MJPEG);
  AVCodecContext* ctx = avcodec_alloc_context3(codec);
  REQUIRE(avcodec_open2(ctx, codec, nullptr) == 0);
  AVPacket* pkt = av_packet_alloc();
  REQUIRE(av_new_packet(pkt, static_cast<int>(jpeg.size())) == 0);
  std::memcpy(pkt->data, jpeg.data(), jpeg.size());
  AVFrame* f = av_frame_alloc();
  REQUIRE(avcodec_send_packet(ctx, pkt) == 0);
  REQUIRE(avcodec_receive_frame(ctx, f) == 0);
  REQUIRE(f->width == kW);
  REQUIRE(f->height == kH);
  double se = 0;
  for (int y = 0; y < kH; ++y) {
    for (int x = 0; x < kW; ++x) {
      const double full = f->data[0][y * f->linesize[0] + x];
      const double limited = 16 + full * 219 / 255;
      se += (limited - luma(x, y)) * (limited - luma(x, y));
    }
  }
  av_frame_free(&f);
  av_packet_free(&pkt);
  avcodec_free_context(&ctx);
  return 10 * std::log10(255.0 * 255.0 / (se / (kW * kH)));
}

}  // namespace

TEST_CASE("an H.264 keyframe in FLV form becomes a JPEG of the asked size, close to the picture") {
  Keyframe k = encode_h264();
  if (k.config.empty()) {
    MESSAGE("no libx264 in this libavcodec: skipped");
    return;
  }
  JpegMade full = make_jpeg(JpegJob{sluice::media::VideoCodec::Avc, k.config, k.nalus, 0, 90});
  REQUIRE(full.error.empty());
  CHECK(full.width == kW);
  CHECK(full.height == kH);
  CHECK(full.jpeg.size() > 100);
  CHECK(full.jpeg[0] == 0xFF);
  CHECK(full.jpeg[1] == 0xD8);  // SOI
  CHECK(luma_psnr(full.jpeg) > 35);

  JpegMade small = make_jpeg(JpegJob{sluice::media::VideoCodec::Avc, k.config, k.nalus, 160, 80});
  REQUIRE(small.error.empty());
  CHECK(small.width == 160);
  CHECK(small.height == 90);

  // The WebP of it (libwebp through libavcodec), when this libavcodec has it.
  if (webp_available()) {
    JpegMade webp =
        make_jpeg(JpegJob{sluice::media::VideoCodec::Avc, k.config, k.nalus, 160, 80, SnapshotFormat::Webp});
    REQUIRE(webp.error.empty());
    CHECK(webp.width == 160);
    REQUIRE(webp.jpeg.size() > 12);
    CHECK(std::memcmp(webp.jpeg.data(), "RIFF", 4) == 0);
    CHECK(std::memcmp(webp.jpeg.data() + 8, "WEBP", 4) == 0);
  }

  // A lower quality is a smaller file.
  JpegMade rough = make_jpeg(JpegJob{sluice::media::VideoCodec::Avc, k.config, k.nalus, 0, 20});
  REQUIRE(rough.error.empty());
  CHECK(rough.jpeg.size() < full.jpeg.size());
}

TEST_CASE("what cannot be decoded says why") {
  const std::vector<uint8_t> junk = {1, 2, 3, 4, 5, 6, 7, 8};
  CHECK(make_jpeg(JpegJob{sluice::media::VideoCodec::Av1, junk, junk, 0, 80}).error ==
        "only H.264 and HEVC are decoded");
  CHECK(!make_jpeg(JpegJob{sluice::media::VideoCodec::Avc, {}, junk, 0, 80}).error.empty());
  JpegMade bad = make_jpeg(JpegJob{sluice::media::VideoCodec::Hevc, junk, junk, 0, 80});
  CHECK(!bad.error.empty());
  CHECK(bad.jpeg.empty());
}
