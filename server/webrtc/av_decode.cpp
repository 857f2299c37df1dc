#include "server/webrtc/av_decode.hpp"

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavutil/audio_fifo.h>
#include <libswresample/swresample.h>
}

#include <cstring>

namespace sluice::server {

void AvDeleter::operator()(AVCodecContext* c) const { avcodec_free_context(&c); }
void AvDeleter::operator()(SwrContext* s) const { swr_free(&s); }
void AvDeleter::operator()(AVAudioFifo* f) const { av_audio_fifo_free(f); }
void AvDeleter::operator()(AVFrame* f) const { av_frame_free(&f); }

bool decode_packet(AVCodecContext* decoder, AVFrame* frame, const uint8_t* data, size_t size,
                   const std::function<void(AVFrame* decoded, bool first)>& take) {
  AVPacket* pkt = av_packet_alloc();
  if (!pkt || size == 0 || av_new_packet(pkt, static_cast<int>(size)) < 0) {
    av_packet_free(&pkt);
    return false;
  }
  std::memcpy(pkt->data, data, size);
  const int sent = avcodec_send_packet(decoder, pkt);
  av_packet_free(&pkt);
  if (sent < 0) return false;
  bool first = true;
  for (;;) {
    const int r = avcodec_receive_frame(decoder, frame);
    if (r == AVERROR(EAGAIN) || r == AVERROR_EOF) return true;
    if (r < 0) return false;
    take(frame, first);
    first = false;
    av_frame_unref(frame);
  }
}

}  // namespace sluice::server
