// A known picture as an H.264 keyframe in the form FLV carries it (an AVC decoder configuration
// record and length-prefixed NAL units), made by libavcodec's libx264, for the snapshot tests
// (jpeg_maker_test.cpp, snapshot_service_test.cpp).
#pragma once

#include <doctest/doctest.h>

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavutil/frame.h>
#include <libavutil/log.h>
}

#include <cstdint>
#include <cstring>
#include <vector>

namespace sluice::test {

constexpr int kW = 320;
constexpr int kH = 180;

// A picture with edges and gradients (a flat one would pass anything).
inline uint8_t luma(int x, int y) {
  const int v = (x / 40 + y / 30) % 2 ? 16 + x * 200 / kW : 235 - y * 200 / kH;
  return static_cast<uint8_t>(v);
}

// Annex B NAL units (start codes 00 00 01 or 00 00 00 01).
inline std::vector<std::vector<uint8_t>> split_annexb(const uint8_t* p, size_t n) {
  std::vector<std::vector<uint8_t>> out;
  size_t i = 0, start = SIZE_MAX;
  while (i + 3 <= n) {
    if (p[i] == 0 && p[i + 1] == 0 && p[i + 2] == 1) {
      if (start != SIZE_MAX) {
        size_t end = i;
        while (end > start && p[end - 1] == 0) --end;
        out.emplace_back(p + start, p + end);
      }
      i += 3;
      start = i;
    } else {
      ++i;
    }
  }
  if (start != SIZE_MAX && start < n) out.emplace_back(p + start, p + n);
  return out;
}

struct Keyframe {
  std::vector<uint8_t> config;  // AVCDecoderConfigurationRecord
  std::vector<uint8_t> nalus;   // 4-byte lengths
};

// One intra picture through libx264, rewrapped as FLV carries it; empty when there is no libx264.
inline Keyframe encode_h264(int shade = 0) {
  Keyframe k;
  av_log_set_level(AV_LOG_FATAL);  // libx264's statistics
  const AVCodec* codec = avcodec_find_encoder_by_name("libx264");
  if (!codec) return k;
  AVCodecContext* ctx = avcodec_alloc_context3(codec);
  ctx->width = kW;
  ctx->height = kH;
  ctx->pix_fmt = AV_PIX_FMT_YUV420P;
  ctx->time_base = AVRational{1, 25};
  ctx->gop_size = 1;
  ctx->max_b_frames = 0;
  ctx->bit_rate = 4'000'000;
  REQUIRE(avcodec_open2(ctx, codec, nullptr) == 0);
  AVFrame* f = av_frame_alloc();
  f->format = AV_PIX_FMT_YUV420P;
  f->width = kW;
  f->height = kH;
  REQUIRE(av_frame_get_buffer(f, 0) == 0);
  for (int y = 0; y < kH; ++y)
    for (int x = 0; x < kW; ++x) f->data[0][y * f->linesize[0] + x] = static_cast<uint8_t>(luma(x, y) + shade);
  for (int p = 1; p < 3; ++p)
    for (int y = 0; y < kH / 2; ++y) std::memset(f->data[p] + y * f->linesize[p], p == 1 ? 100 : 160, kW / 2);
  f->pts = 0;
  REQUIRE(avcodec_send_frame(ctx, f) == 0);
  REQUIRE(avcodec_send_frame(ctx, nullptr) == 0);
  AVPacket* pkt = av_packet_alloc();
  REQUIRE(avcodec_receive_packet(ctx, pkt) == 0);
  std::vector<uint8_t> sps, pps;
  for (auto& nal : split_annexb(pkt->data, static_cast<size_t>(pkt->size))) {
    const int type = nal[0] & 0x1F;
    if (type == 7) sps = nal;
    if (type == 8) pps = nal;
    if (type == 7 || type == 8 || type == 9) continue;  // in the record, not the frame
    const uint32_t n = static_cast<uint32_t>(nal.size());
    k.nalus.insert(k.nalus.end(), {uint8_t(n >> 24), uint8_t(n >> 16), uint8_t(n >> 8), uint8_t(n)});
    k.nalus.insert(k.nalus.end(), nal.begin(), nal.end());
  }
  REQUIRE(sps.size() > 3);
  REQUIRE(!pps.empty());
  k.config = {1, sps[1], sps[2], sps[3], 0xFF, 0xE1, uint8_t(sps.size() >> 8), uint8_t(sps.size())};
  k.config.insert(k.config.end(), sps.begin(), sps.end());
  k.config.insert(k.config.end(), {1, uint8_t(pps.size() >> 8), uint8_t(pps.size())});
  k.config.insert(k.config.end(), pps.begin(), pps.end());
  av_packet_free(&pkt);
  av_frame_free(&f);
  avcodec_free_context(&ctx);
  return k;
}

}  // namespace sluice::test
