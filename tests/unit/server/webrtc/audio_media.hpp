// Real audio for the audio bridge's tests, made at test time with libavcodec itself (no tool
// needed): a 440 Hz tone encoded to AAC (the native encoder) or Opus (libopus), decoding of what
// the bridge makes, and the measures the tests take of it (Goertzel power, level, onset).
#pragma once

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavutil/channel_layout.h>
#include <libavutil/opt.h>
}

#include "base/bytes.hpp"
#include "media/frame.hpp"

namespace sluice::test::audio {

using Bytes = std::vector<uint8_t>;

struct Packet {
  int64_t pts = 0;  // in samples of the codec's rate: the first decoded sample's time
  Bytes data;
};

struct Encoded {
  int rate = 0;
  int channels = 0;
  Bytes extradata;  // the AudioSpecificConfig for AAC
  std::vector<Packet> packets;
};

// A tone of `amplitude` at `freq` that starts at `onset` seconds (silence before), interleaved.
inline std::vector<float> tone(int rate, int channels, double seconds, double freq = 440, double amplitude = 0.5,
                               double onset = 0) {
  const auto n = static_cast<size_t>(seconds * rate);
  std::vector<float> pcm(n * static_cast<size_t>(channels), 0.0f);
  const auto start = static_cast<size_t>(onset * rate);
  for (size_t i = start; i < n; ++i) {
    const auto v = static_cast<float>(amplitude * std::sin(2 * M_PI * freq * static_cast<double>(i - start) / rate));
    for (int c = 0; c < channels; ++c) pcm[i * static_cast<size_t>(channels) + static_cast<size_t>(c)] = v;
  }
  return pcm;
}

// Something harder to code than a tone, for the CPU figures: a chord of five partials with
// vibrato and white noise 20 dB under it, different on each channel.
inline std::vector<float> busy(int rate, int channels, double seconds) {
  const auto n = static_cast<size_t>(seconds * rate);
  std::vector<float> pcm(n * static_cast<size_t>(channels));
  uint32_t noise = 36;
  for (size_t i = 0; i < n; ++i) {
    const double t = static_cast<double>(i) / rate;
    for (int c = 0; c < channels; ++c) {
      double v = 0;
      for (const double f : {220.0, 277.2, 329.6, 440.0, 1318.5}) {
        v += 0.08 * std::sin(2 * M_PI * (f + c) * t + 0.3 * std::sin(2 * M_PI * 5 * t));
      }
      noise = noise * 1664525u + 1013904223u;
      v += 0.04 * (static_cast<double>(noise >> 8) / (1 << 24) - 0.5);
      pcm[i * static_cast<size_t>(channels) + static_cast<size_t>(c)] = static_cast<float>(v);
    }
  }
  return pcm;
}

// Encodes interleaved float PCM with `encoder` ("aac" or "libopus"); packets keep the encoder's
// pts, which already counts its priming (the first packet's is negative).
inline Encoded encode(const char* encoder, const std::vector<float>& pcm, int rate, int channels, int64_t bitrate) {
  av_log_set_level(AV_LOG_ERROR);  // not the encoders' closing statistics
  Encoded e;
  e.rate = rate;
  e.channels = channels;
  const AVCodec* codec = avcodec_find_encoder_by_name(encoder);
  REQUIRE(codec != nullptr);
  AVCodecContext* ctx = avcodec_alloc_context3(codec);
  ctx->sample_rate = rate;
  av_channel_layout_default(&ctx->ch_layout, channels);
  const bool planar = std::string(encoder) == "aac";
  ctx->sample_fmt = planar ? AV_SAMPLE_FMT_FLTP : AV_SAMPLE_FMT_FLT;
  ctx->bit_rate = bitrate;
  ctx->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
  ctx->time_base = AVRational{1, rate};
  REQUIRE(avcodec_open2(ctx, codec, nullptr) == 0);
  if (ctx->extradata_size > 0) e.extradata.assign(ctx->extradata, ctx->extradata + ctx->extradata_size);
  AVFrame* f = av_frame_alloc();
  AVPacket* pkt = av_packet_alloc();
  const size_t total = pcm.size() / static_cast<size_t>(channels);
  auto drain = [&] {
    while (avcodec_receive_packet(ctx, pkt) == 0) {
      e.packets.push_back({pkt->pts, Bytes(pkt->data, pkt->data + pkt->size)});
      av_packet_unref(pkt);
    }
  };
  for (size_t at = 0; at < total; at += static_cast<size_t>(ctx->frame_size)) {
    const size_t n = std::min(total - at, static_cast<size_t>(ctx->frame_size));
    av_frame_unref(f);
    f->nb_samples = ctx->frame_size;  // the last one padded with silence
    f->format = ctx->sample_fmt;
    f->sample_rate = rate;
    av_channel_layout_copy(&f->ch_layout, &ctx->ch_layout);
    REQUIRE(av_frame_get_buffer(f, 0) == 0);
    for (int c = 0; c < channels; ++c) {
      for (size_t i = 0; i < static_cast<size_t>(ctx->frame_size); ++i) {
        const float v = i < n ? pcm[(at + i) * static_cast<size_t>(channels) + static_cast<size_t>(c)] : 0.0f;
        if (planar) {
          reinterpret_cast<float*>(f->data[c])[i] = v;
        } else {
          reinterpret_cast<float*>(f->data[0])[i * static_cast<size_t>(channels) + static_cast<size_t>(c)] = v;
        }
      }
    }
    f->pts = static_cast<int64_t>(at);
    REQUIRE(avcodec_send_frame(ctx, f) == 0);
    drain();
  }
  REQUIRE(avcodec_send_frame(ctx, nullptr) == 0);
  drain();
  av_packet_free(&pkt);
  av_frame_free(&f);
  avcodec_free_context(&ctx);
  return e;
}

// Milliseconds of a sample position, rounded to nearest.
inline uint32_t ms_of(int64_t samples, int rate, uint32_t base) {
  return base + static_cast<uint32_t>(std::llround(static_cast<double>(samples) * 1000.0 / rate));
}

// The hub's AAC frames for an encoding: the sequence header, then one frame per packet stamped
// with its first sample's time plus base (ms).
inline media::FramePtr aac_frame(uint8_t packet_type, const Bytes& data, uint32_t timestamp) {
  Bytes body{0xAF, packet_type};
  body.insert(body.end(), data.begin(), data.end());
  return media::make_frame(8, timestamp, Slice::adopt(std::move(body)));
}

struct Decoded {
  int rate = 0;
  int channels = 0;
  std::vector<float> mono;   // the first channel
  std::vector<float> other;  // the last channel
  int errors = 0;
  int frames = 0;
};

// Decodes packets with `decoder` ("opus", "aac"), optionally with extradata; decoding errors are
// counted, not fatal, so that the tests can check there are none.
inline Decoded decode(const char* decoder, const std::vector<Bytes>& packets, const Bytes& extradata = {},
                      int channels = 0) {
  Decoded d;
  const AVCodec* codec = avcodec_find_decoder_by_name(decoder);
  REQUIRE(codec != nullptr);
  AVCodecContext* ctx = avcodec_alloc_context3(codec);
  if (!extradata.empty()) {
    ctx->extradata = static_cast<uint8_t*>(av_mallocz(extradata.size() + AV_INPUT_BUFFER_PADDING_SIZE));
    std::memcpy(ctx->extradata, extradata.data(), extradata.size());
    ctx->extradata_size = static_cast<int>(extradata.size());
  }
  if (channels > 0) av_channel_layout_default(&ctx->ch_layout, channels);
  if (std::string(decoder) == "opus") ctx->sample_rate = 48000;
  REQUIRE(avcodec_open2(ctx, codec, nullptr) == 0);
  AVFrame* f = av_frame_alloc();
  AVPacket* pkt = av_packet_alloc();
  for (const Bytes& p : packets) {
    REQUIRE(av_new_packet(pkt, static_cast<int>(p.size())) == 0);
    std::memcpy(pkt->data, p.data(), p.size());
    if (avcodec_send_packet(ctx, pkt) < 0) ++d.errors;
    av_packet_unref(pkt);
    for (;;) {
      const int r = avcodec_receive_frame(ctx, f);
      if (r == AVERROR(EAGAIN) || r == AVERROR_EOF) break;
      if (r < 0) {
        ++d.errors;
        break;
      }
      ++d.frames;
      d.rate = f->sample_rate;
      d.channels = f->ch_layout.nb_channels;
      const bool planar = av_sample_fmt_is_planar(static_cast<AVSampleFormat>(f->format));
      REQUIRE((f->format == AV_SAMPLE_FMT_FLTP || f->format == AV_SAMPLE_FMT_FLT));
      for (int i = 0; i < f->nb_samples; ++i) {
        const int last = d.channels - 1;
        const auto* first_plane = reinterpret_cast<const float*>(f->extended_data[0]);
        const auto* last_plane = reinterpret_cast<const float*>(f->extended_data[planar ? last : 0]);
        d.mono.push_back(planar ? first_plane[i] : first_plane[i * d.channels]);
        d.other.push_back(planar ? last_plane[i] : last_plane[i * d.channels + last]);
      }
      av_frame_unref(f);
    }
  }
  av_packet_free(&pkt);
  av_frame_free(&f);
  avcodec_free_context(&ctx);
  return d;
}

// Goertzel: the power of one frequency in pcm[from, from + n).
inline double power_at(const std::vector<float>& pcm, size_t from, size_t n, int rate, double freq) {
  const double w = 2 * M_PI * freq / rate;
  const double k = 2 * std::cos(w);
  double s1 = 0, s2 = 0;
  for (size_t i = from; i < from + n && i < pcm.size(); ++i) {
    const double s0 = pcm[i] + k * s1 - s2;
    s2 = s1;
    s1 = s0;
  }
  return s1 * s1 + s2 * s2 - k * s1 * s2;
}

// The strongest frequency between 100 Hz and 4 kHz, in 5 Hz steps.
inline double dominant(const std::vector<float>& pcm, size_t from, size_t n, int rate) {
  double best = 0, best_power = -1;
  for (double f = 100; f <= 4000; f += 5) {
    const double p = power_at(pcm, from, n, rate, f);
    if (p > best_power) {
      best_power = p;
      best = f;
    }
  }
  return best;
}

inline double rms(const std::vector<float>& pcm, size_t from, size_t n) {
  double sum = 0;
  size_t count = 0;
  for (size_t i = from; i < from + n && i < pcm.size(); ++i, ++count) sum += double{pcm[i]} * pcm[i];
  return count ? std::sqrt(sum / static_cast<double>(count)) : 0;
}

// The first sample whose level reaches `threshold`: where a tone starts.
inline size_t onset(const std::vector<float>& pcm, float threshold = 0.25f) {
  for (size_t i = 0; i < pcm.size(); ++i) {
    if (std::fabs(pcm[i]) >= threshold) return i;
  }
  return pcm.size();
}

}  // namespace sluice::test::audio
