#include "server/snapshot/jpeg_maker.hpp"

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavutil/frame.h>
#include <libavutil/log.h>
#include <libavutil/mem.h>
#include <libavutil/opt.h>
#include <libswscale/swscale.h>
}

#include <chrono>
#include <cstring>
#include <memory>

#include "server/snapshot/snapshot_params.hpp"

namespace sluice::server {

namespace {

struct LibavFree {
  void operator()(AVCodecContext* c) const { avcodec_free_context(&c); }
  void operator()(AVFrame* f) const { av_frame_free(&f); }
  void operator()(AVPacket* p) const { av_packet_free(&p); }
  void operator()(SwsContext* s) const { sws_freeContext(s); }
};
template <class T>
using Owned = std::unique_ptr<T, LibavFree>;

uint64_t since_us(std::chrono::steady_clock::time_point t0) {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0).count());
}

// A packet over a copy of `bytes` with the padding libavcodec reads past the end.
Owned<AVPacket> packet_of(std::span<const uint8_t> bytes) {
  Owned<AVPacket> pkt(av_packet_alloc());
  if (!pkt || bytes.empty() || av_new_packet(pkt.get(), static_cast<int>(bytes.size())) < 0) return nullptr;
  std::memcpy(pkt->data, bytes.data(), bytes.size());
  pkt->flags |= AV_PKT_FLAG_KEY;
  return pkt;
}

// The keyframe decoded on its own: sent, then the decoder drained (a reordering decoder holds
// the picture until it knows nothing comes before it).
Owned<AVFrame> decode(const JpegJob& job, std::string& error) {
  const AVCodecID id = job.codec == media::VideoCodec::Hevc ? AV_CODEC_ID_HEVC : AV_CODEC_ID_H264;
  const AVCodec* codec = avcodec_find_decoder(id);
  Owned<AVCodecContext> ctx(codec ? avcodec_alloc_context3(codec) : nullptr);
  if (!ctx) {
    error = "no decoder for the stream's codec";
    return nullptr;
  }
  ctx->extradata = static_cast<uint8_t*>(av_mallocz(job.config.size() + AV_INPUT_BUFFER_PADDING_SIZE));
  if (!ctx->extradata) {
    error = "out of memory";
    return nullptr;
  }
  std::memcpy(ctx->extradata, job.config.data(), job.config.size());
  ctx->extradata_size = static_cast<int>(job.config.size());
  ctx->thread_count = 1;  // a threadpool thread already: no threads of its own
  // An intra picture that is not an IDR (a recovery point) is whole too.
  ctx->flags2 |= AV_CODEC_FLAG2_SHOW_ALL;
  if (avcodec_open2(ctx.get(), codec, nullptr) < 0) {
    error = "the decoder refused the stream's configuration record";
    return nullptr;
  }
  Owned<AVPacket> pkt = packet_of(job.nalus);
  Owned<AVFrame> frame(av_frame_alloc());
  if (!pkt || !frame) {
    error = "out of memory";
    return nullptr;
  }
  if (avcodec_send_packet(ctx.get(), pkt.get()) < 0 || avcodec_send_packet(ctx.get(), nullptr) < 0) {
    error = "the decoder refused the keyframe";
    return nullptr;
  }
  if (avcodec_receive_frame(ctx.get(), frame.get()) < 0 || frame->width <= 0 || frame->height <= 0) {
    error = "the keyframe decoded to no picture";
    return nullptr;
  }
  return frame;
}

// To the picture's size and to 4:2:0: full range for a JPEG (JFIF's), limited for a WebP (VP8's).
Owned<AVFrame> scale(const AVFrame& in, SnapshotSize size, bool full_range, std::string& error) {
  Owned<AVFrame> out(av_frame_alloc());
  if (!out) {
    error = "out of memory";
    return nullptr;
  }
  out->format = AV_PIX_FMT_YUV420P;
  out->width = static_cast<int>(size.width);
  out->height = static_cast<int>(size.height);
  out->color_range = full_range ? AVCOL_RANGE_JPEG : AVCOL_RANGE_MPEG;
  const bool resize = out->width != in.width || out->height != in.height;
  // The ranges are options of the context, set before it is initialised: its converter is chosen
  // then (a same-size, same-format context would otherwise copy the limited range unchanged).
  Owned<SwsContext> sws(sws_alloc_context());
  const bool set = sws && av_opt_set_int(sws.get(), "srcw", in.width, 0) >= 0 &&
                   av_opt_set_int(sws.get(), "srch", in.height, 0) >= 0 &&
                   av_opt_set_int(sws.get(), "src_format", in.format, 0) >= 0 &&
                   av_opt_set_int(sws.get(), "src_range", in.color_range == AVCOL_RANGE_JPEG ? 1 : 0, 0) >= 0 &&
                   av_opt_set_int(sws.get(), "dstw", out->width, 0) >= 0 &&
                   av_opt_set_int(sws.get(), "dsth", out->height, 0) >= 0 &&
                   av_opt_set_int(sws.get(), "dst_format", AV_PIX_FMT_YUV420P, 0) >= 0 &&
                   av_opt_set_int(sws.get(), "dst_range", full_range ? 1 : 0, 0) >= 0 &&
                   av_opt_set_int(sws.get(), "sws_flags", resize ? SWS_AREA : SWS_POINT, 0) >= 0;
  if (!set || sws_init_context(sws.get(), nullptr, nullptr) < 0 || av_frame_get_buffer(out.get(), 0) < 0) {
    error = "cannot convert the decoded picture";
    return nullptr;
  }
  sws_scale(sws.get(), in.data, in.linesize, 0, in.height, out->data, out->linesize);
  return out;
}

bool encode(AVFrame& picture, uint32_t quality, std::vector<uint8_t>& jpeg, std::string& error) {
  const AVCodec* codec = avcodec_find_encoder(AV_CODEC_ID_MJPEG);
  Owned<AVCodecContext> ctx(codec ? avcodec_alloc_context3(codec) : nullptr);
  if (!ctx) {
    error = "no JPEG encoder";
    return false;
  }
  ctx->width = picture.width;
  ctx->height = picture.height;
  ctx->pix_fmt = AV_PIX_FMT_YUV420P;
  ctx->color_range = AVCOL_RANGE_JPEG;
  ctx->time_base = AVRational{1, 25};
  ctx->thread_count = 1;
  ctx->flags |= AV_CODEC_FLAG_QSCALE;
  ctx->qmin = 1;
  ctx->qmax = 31;
  ctx->global_quality = static_cast<int>(mjpeg_qscale(quality)) * FF_QP2LAMBDA;
  if (avcodec_open2(ctx.get(), codec, nullptr) < 0) {
    error = "the JPEG encoder did not open";
    return false;
  }
  picture.quality = ctx->global_quality;
  picture.pict_type = AV_PICTURE_TYPE_I;
  Owned<AVPacket> pkt(av_packet_alloc());
  if (!pkt || avcodec_send_frame(ctx.get(), &picture) < 0 || avcodec_receive_packet(ctx.get(), pkt.get()) < 0) {
    error = "the JPEG encoder failed";
    return false;
  }
  jpeg.assign(pkt->data, pkt->data + pkt->size);
  return true;
}

// libwebp through libavcodec: lossy, its quality the asked one.
bool encode_webp(AVFrame& picture, uint32_t quality, std::vector<uint8_t>& out, std::string& error) {
  const AVCodec* codec = avcodec_find_encoder_by_name("libwebp");
  Owned<AVCodecContext> ctx(codec ? avcodec_alloc_context3(codec) : nullptr);
  if (!ctx) {
    error = "no WebP encoder";
    return false;
  }
  ctx->width = picture.width;
  ctx->height = picture.height;
  ctx->pix_fmt = AV_PIX_FMT_YUV420P;
  ctx->time_base = AVRational{1, 25};
  ctx->thread_count = 1;
  if (av_opt_set_double(ctx->priv_data, "quality", quality, 0) < 0 || avcodec_open2(ctx.get(), codec, nullptr) < 0) {
    error = "the WebP encoder did not open";
    return false;
  }
  Owned<AVPacket> pkt(av_packet_alloc());
  if (!pkt || avcodec_send_frame(ctx.get(), &picture) < 0 || avcodec_receive_packet(ctx.get(), pkt.get()) < 0) {
    error = "the WebP encoder failed";
    return false;
  }
  out.assign(pkt->data, pkt->data + pkt->size);
  return true;
}

}  // namespace

bool webp_available() { return avcodec_find_encoder_by_name("libwebp") != nullptr; }

JpegMade make_jpeg(const JpegJob& job) {
  // libavcodec would print a damaged keyframe's every error to stderr; the failure is logged once
  // (event=snapshot_failed) instead. Set once: the level is global, as the WebRTC bridge sets it.
  static const bool quiet = [] {
    av_log_set_level(AV_LOG_FATAL);
    return true;
  }();
  (void)quiet;
  JpegMade made;
  const auto t0 = std::chrono::steady_clock::now();
  if (job.codec != media::VideoCodec::Avc && job.codec != media::VideoCodec::Hevc) {
    made.error = "only H.264 and HEVC are decoded";
    return made;
  }
  if (job.config.empty() || job.nalus.empty()) {
    made.error = "no configuration record or no keyframe";
    return made;
  }
  Owned<AVFrame> decoded = decode(job, made.error);
  made.decode_us = since_us(t0);
  if (!decoded) return made;
  const SnapshotSize size =
      snapshot_size(static_cast<uint32_t>(decoded->width), static_cast<uint32_t>(decoded->height), job.width);
  const bool jpeg = job.format == SnapshotFormat::Jpeg;
  Owned<AVFrame> picture = scale(*decoded, size, jpeg, made.error);
  if (!picture) return made;
  if (!(jpeg ? encode(*picture, job.quality, made.jpeg, made.error)
             : encode_webp(*picture, job.quality, made.jpeg, made.error))) {
    return made;
  }
  made.width = size.width;
  made.height = size.height;
  made.total_us = since_us(t0);
  return made;
}

}  // namespace sluice::server
