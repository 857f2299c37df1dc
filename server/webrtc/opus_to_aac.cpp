#include "server/webrtc/opus_to_aac.hpp"

#include <algorithm>
#include <cstring>

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavutil/audio_fifo.h>
#include <libavutil/channel_layout.h>
#include <libavutil/log.h>
}

#include "base/bytes.hpp"
#include "media/codec/flv_audio.hpp"
#include "media/codec/opus.hpp"
#include "protocol/message.hpp"

namespace sluice::server {

namespace {

constexpr int kRate = static_cast<int>(media::kOpusSampleRate);
constexpr int kSamplesPerMs = kRate / 1000;
constexpr int kChannels = 2;  // a mono publisher is decoded to two equal channels
constexpr int64_t kBitrate = 128000;
// FLV's legacy header byte for AAC: sound format 10, "44 kHz, 16-bit, stereo", which players
// ignore for AAC (the AudioSpecificConfig rules), as media/ts/ts_demuxer.cpp writes it.
constexpr uint8_t kFlvAac = media::kSoundFormatAac << 4 | 0x0F;

// The nearest millisecond of a 48 kHz position, for negative positions too.
int64_t ms_of(int64_t samples) {
  const int64_t n = samples * 1000 + kRate / 2;
  return n >= 0 ? n / kRate : -((-n + kRate - 1) / kRate);
}

media::FramePtr aac_frame(uint8_t packet_type, const uint8_t* data, size_t size, uint32_t stamp) {
  std::vector<uint8_t> body;
  body.reserve(2 + size);
  body.push_back(kFlvAac);
  body.push_back(packet_type);
  body.insert(body.end(), data, data + size);
  return media::make_frame(protocol::msg_type::kAudio, stamp, Slice::adopt(std::move(body)));
}

}  // namespace

OpusToAac::OpusToAac() : decoded_(av_frame_alloc()), block_(av_frame_alloc()) {
  // libavcodec would print every damaged packet to stderr; they are counted in stats() instead.
  // (Set once: the level is global, and bridges may be made on several threads.)
  static const bool quiet = [] {
    av_log_set_level(AV_LOG_FATAL);
    return true;
  }();
  (void)quiet;
}
OpusToAac::~OpusToAac() = default;

void OpusToAac::push(const media::Frame& frame, std::vector<media::FramePtr>& out) {
  if (frame.kind != media::FrameKind::Audio) return;
  const auto body = media::read_opus_body(frame.payload.span());
  if (!body) return;
  ++stats_.frames_in;
  const auto bytes = frame.payload.span().subspan(body->offset, body->size);
  if (body->sequence_header) {
    // The decoder needs nothing from the OpusHead: WebRTC's Opus is mono or stereo (mapping
    // family 0) and its pre-skip is already in the RTP times. More channels cannot be decoded.
    const auto head = media::parse_opus_head(bytes);
    multichannel_ = head && head->channels > 2;
    if (!head || multichannel_) ++stats_.skipped;
    return;
  }
  if (bytes.empty() || multichannel_ || !decoded_ || !block_) {
    ++stats_.skipped;
    return;
  }
  decode(bytes.data(), bytes.size(), frame.timestamp, out);
}

void OpusToAac::flush(std::vector<media::FramePtr>& out) { finish(out); }

void OpusToAac::decode(const uint8_t* data, size_t size, uint32_t timestamp, std::vector<media::FramePtr>& out) {
  if (!decoder_) {
    const AVCodec* codec = avcodec_find_decoder(AV_CODEC_ID_OPUS);
    std::unique_ptr<AVCodecContext, AvDeleter> ctx(codec ? avcodec_alloc_context3(codec) : nullptr);
    if (ctx) {
      ctx->sample_rate = kRate;
      av_channel_layout_default(&ctx->ch_layout, kChannels);
      if (avcodec_open2(ctx.get(), codec, nullptr) >= 0) decoder_ = std::move(ctx);
    }
    if (!decoder_) {
      ++stats_.skipped;
      return;
    }
  }
  const bool ok = decode_packet(decoder_.get(), decoded_.get(), data, size,
                                [&](AVFrame* decoded, bool first) { take(decoded, timestamp, first, out); });
  if (!ok) ++stats_.skipped;
}

// One decoded packet: onto the timeline (starting, restarting or resyncing it), into the FIFO,
// and whatever makes whole 1024-sample frames through the encoder.
void OpusToAac::take(const AVFrame* pcm, uint32_t timestamp, bool first_of_packet, std::vector<media::FramePtr>& out) {
  if (pcm->nb_samples <= 0 || pcm->sample_rate != kRate || pcm->format != AV_SAMPLE_FMT_FLTP ||
      pcm->ch_layout.nb_channels != kChannels) {
    ++stats_.skipped;
    return;
  }
  if (running_ && first_of_packet) {
    const int64_t want = int64_t{static_cast<int32_t>(timestamp - anchor_)} * kSamplesPerMs;
    const int64_t drift = want - position_;
    if (drift > int64_t{kMaxGapMs} * kSamplesPerMs || drift < -int64_t{kMaxGapMs} * kSamplesPerMs) {
      finish(out);
      ++stats_.resets;
    }
  }
  if (!running_ && !start(timestamp, out)) {
    ++stats_.skipped;
    return;
  }
  if (first_of_packet) skip_ = resync(timestamp);
  const int skip = static_cast<int>(std::min<int64_t>(skip_, pcm->nb_samples));
  skip_ -= skip;
  dropped_ += skip;
  stats_.dropped_ms = static_cast<uint64_t>(dropped_ / kSamplesPerMs);
  const int keep = pcm->nb_samples - skip;
  if (keep > 0) {
    void* planes[kChannels];
    for (int c = 0; c < kChannels; ++c) planes[c] = reinterpret_cast<float*>(pcm->extended_data[c]) + skip;
    av_audio_fifo_write(fifo_.get(), planes, keep);
    position_ += keep;
  }
  encode_ready(out);
}

bool OpusToAac::start(uint32_t timestamp, std::vector<media::FramePtr>& out) {
  const AVCodec* codec = avcodec_find_encoder(AV_CODEC_ID_AAC);
  std::unique_ptr<AVCodecContext, AvDeleter> ctx(codec ? avcodec_alloc_context3(codec) : nullptr);
  if (!ctx) return false;
  ctx->sample_rate = kRate;
  ctx->sample_fmt = AV_SAMPLE_FMT_FLTP;
  av_channel_layout_default(&ctx->ch_layout, kChannels);
  ctx->bit_rate = kBitrate;
  ctx->profile = FF_PROFILE_AAC_LOW;
  ctx->time_base = AVRational{1, kRate};
  ctx->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;  // the AudioSpecificConfig in extradata
  if (avcodec_open2(ctx.get(), codec, nullptr) < 0 || ctx->frame_size != kFrameSamples || ctx->extradata_size <= 0) {
    return false;
  }
  std::unique_ptr<AVAudioFifo, AvDeleter> fifo(av_audio_fifo_alloc(AV_SAMPLE_FMT_FLTP, kChannels, 4 * kFrameSamples));
  if (!fifo) return false;
  priming_ = std::max(ctx->initial_padding, 0);
  std::vector<uint8_t> asc(ctx->extradata, ctx->extradata + ctx->extradata_size);
  encoder_ = std::move(ctx);
  fifo_ = std::move(fifo);
  frames_ = 0;
  position_ = 0;
  skip_ = 0;
  anchor_ = timestamp;
  // A new timeline that would start inside the last one moves just behind it, so that stamps
  // never go back; resync() then drops the audio it now overlaps. A real backward jump is followed.
  const auto first_stamp = static_cast<uint32_t>(anchor_ + ms_of(-priming_));
  const auto behind = static_cast<int32_t>(sent_end_ - first_stamp);
  if (sent_any_ && behind > 0 && behind <= kMaxGapMs) anchor_ += static_cast<uint32_t>(behind);
  running_ = true;
  if (asc != asc_) {
    asc_ = std::move(asc);
    out.push_back(aac_frame(0, asc_.data(), asc_.size(), static_cast<uint32_t>(anchor_ + ms_of(-priming_))));
  }
  return true;
}

// Follows the input's stamp when it is more than kResyncMs from the sample count: lost packets
// become silence; for a repeated or late packet, gives how many of its samples to leave out.
int64_t OpusToAac::resync(uint32_t timestamp) {
  const int64_t want = int64_t{static_cast<int32_t>(timestamp - anchor_)} * kSamplesPerMs;
  const int64_t drift = want - position_;
  if (drift > int64_t{kResyncMs} * kSamplesPerMs) {
    write_silence(static_cast<int>(drift));
    position_ += drift;
    stats_.silence_ms += static_cast<uint64_t>(drift / kSamplesPerMs);
  } else if (drift < -int64_t{kResyncMs} * kSamplesPerMs) {
    return -drift;
  }
  return 0;
}

void OpusToAac::write_silence(int samples) {
  if (samples <= 0) return;
  std::vector<float> zeros(static_cast<size_t>(samples), 0.0f);
  void* planes[kChannels];
  for (auto& p : planes) p = zeros.data();
  av_audio_fifo_write(fifo_.get(), planes, samples);
}

void OpusToAac::encode_ready(std::vector<media::FramePtr>& out) {
  while (av_audio_fifo_size(fifo_.get()) >= kFrameSamples) {
    AVFrame* b = block_.get();
    av_frame_unref(b);
    b->nb_samples = kFrameSamples;
    b->format = AV_SAMPLE_FMT_FLTP;
    b->sample_rate = kRate;
    av_channel_layout_default(&b->ch_layout, kChannels);
    if (av_frame_get_buffer(b, 0) < 0) return;
    av_audio_fifo_read(fifo_.get(), reinterpret_cast<void**>(b->extended_data), kFrameSamples);
    b->pts = frames_ * kFrameSamples;  // the encoder's bookkeeping; the stamps are ours
    encode_frame(b, out);
  }
}

// Sends one frame (or nullptr: drain) and turns every packet out into a hub frame. Packet n's
// first decoded sample is input sample 1024 n - priming, from which its stamp is rounded.
void OpusToAac::encode_frame(AVFrame* pcm, std::vector<media::FramePtr>& out) {
  if (avcodec_send_frame(encoder_.get(), pcm) < 0) return;
  AVPacket* pkt = av_packet_alloc();
  if (!pkt) return;
  while (avcodec_receive_packet(encoder_.get(), pkt) >= 0) {
    const int64_t at = frames_ * kFrameSamples - priming_;
    const auto stamp = static_cast<uint32_t>(anchor_ + ms_of(at));
    ++frames_;
    ++stats_.frames_out;
    out.push_back(aac_frame(1, pkt->data, static_cast<size_t>(pkt->size), stamp));
    sent_any_ = true;
    sent_end_ = static_cast<uint32_t>(anchor_ + ms_of(at + kFrameSamples));
    av_packet_unref(pkt);
  }
  av_packet_free(&pkt);
}

// Ends the timeline: the last partial frame padded with silence, then the encoder drained.
void OpusToAac::finish(std::vector<media::FramePtr>& out) {
  if (!running_) return;
  const int partial = av_audio_fifo_size(fifo_.get()) % kFrameSamples;
  if (partial > 0) write_silence(kFrameSamples - partial);
  encode_ready(out);
  encode_frame(nullptr, out);
  encoder_.reset();
  fifo_.reset();
  running_ = false;
}

}  // namespace sluice::server
