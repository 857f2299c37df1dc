#include "server/webrtc/aac_to_opus.hpp"

#include <algorithm>
#include <cstring>

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavutil/audio_fifo.h>
#include <libavutil/channel_layout.h>
#include <libavutil/log.h>
#include <libavutil/opt.h>
#include <libswresample/swresample.h>
}

#include "base/bytes.hpp"
#include "media/codec/aac.hpp"
#include "media/codec/flv_audio.hpp"
#include "media/codec/opus.hpp"
#include "protocol/message.hpp"

namespace sluice::server {

namespace {

constexpr int kRate = static_cast<int>(media::kOpusSampleRate);
constexpr int kSamplesPerMs = kRate / 1000;
// libopus at 20 ms: "audio" lets it pick CELT for music and SILK/hybrid for speech; in-band FEC
// with an expected loss of 5% makes it spend bits on a redundant copy when it codes speech,
// which a WebRTC player uses to repair a single lost packet.
constexpr int64_t kStereoBitrate = 96000;
constexpr int64_t kMonoBitrate = 64000;
constexpr const char* kExpectedLoss = "5";

uint64_t layout_key(const AVChannelLayout& l) { return l.order == AV_CHANNEL_ORDER_NATIVE ? l.u.mask : 0; }

}  // namespace

AacToOpus::AacToOpus() : decoded_(av_frame_alloc()), block_(av_frame_alloc()) {
  // libavcodec would print every damaged frame to stderr; they are counted in stats() instead.
  // (Set once: the level is global, and bridges may be made on several threads.)
  static const bool quiet = [] {
    av_log_set_level(AV_LOG_FATAL);
    return true;
  }();
  (void)quiet;
}
AacToOpus::~AacToOpus() = default;

void AacToOpus::push(const media::Frame& frame, std::vector<media::FramePtr>& out) {
  if (frame.kind != media::FrameKind::Audio) return;
  const std::span<const uint8_t> body = frame.payload.span();
  if (body.size() < 2 || body[0] >> 4 != media::kSoundFormatAac) return;
  ++stats_.frames_in;
  if (body[1] == 0) {
    configure(body.data() + 2, body.size() - 2);
  } else if (body[1] == 1 && decoder_ && decoded_ && block_) {
    decode(body.data() + 2, body.size() - 2, frame.timestamp, out);
  } else {
    ++stats_.skipped;
  }
}

void AacToOpus::flush(std::vector<media::FramePtr>& out) { finish(out); }

// A new AudioSpecificConfig reopens the decoder. What it changes shows in the decoded frames,
// which take() follows: a new rate keeps the timeline, a new channel count starts another. The
// same config again changes nothing.
void AacToOpus::configure(const uint8_t* asc, size_t size) {
  const std::span<const uint8_t> bytes(asc, size);
  if (decoder_ && std::equal(bytes.begin(), bytes.end(), asc_.begin(), asc_.end())) return;
  decoder_.reset();
  asc_.clear();
  if (!media::parse_aac_config(bytes)) {
    ++stats_.skipped;
    return;
  }
  const AVCodec* codec = avcodec_find_decoder(AV_CODEC_ID_AAC);
  std::unique_ptr<AVCodecContext, AvDeleter> ctx(codec ? avcodec_alloc_context3(codec) : nullptr);
  if (!ctx) {
    ++stats_.skipped;
    return;
  }
  ctx->extradata = static_cast<uint8_t*>(av_mallocz(size + AV_INPUT_BUFFER_PADDING_SIZE));
  if (!ctx->extradata) {
    ++stats_.skipped;
    return;
  }
  std::memcpy(ctx->extradata, asc, size);
  ctx->extradata_size = static_cast<int>(size);
  if (avcodec_open2(ctx.get(), codec, nullptr) < 0) {
    ++stats_.skipped;
    return;
  }
  decoder_ = std::move(ctx);
  asc_.assign(bytes.begin(), bytes.end());
}

void AacToOpus::decode(const uint8_t* data, size_t size, uint32_t timestamp, std::vector<media::FramePtr>& out) {
  const bool ok = decode_packet(decoder_.get(), decoded_.get(), data, size, [&](AVFrame* decoded, bool first) {
    if (decoded->nb_samples > 0) take(decoded, timestamp, first, out);
  });
  if (!ok) ++stats_.skipped;
}

// One decoded AAC frame: onto the timeline (starting, restarting or resyncing it), through the
// resampler into the FIFO, and whatever makes whole 20 ms blocks out through the encoder.
void AacToOpus::take(AVFrame* pcm, uint32_t timestamp, bool first_of_packet, std::vector<media::FramePtr>& out) {
  const int channels = std::min(pcm->ch_layout.nb_channels, 2);
  if (channels < 1 || pcm->sample_rate <= 0) {
    ++stats_.skipped;
    return;
  }
  if (running_ && channels != channels_) {  // the OpusHead changes: a new encoder and timeline
    finish(out);
    ++stats_.resets;
  }
  if (running_ && first_of_packet) {
    const int64_t want = int64_t{static_cast<int32_t>(timestamp - anchor_)} * kSamplesPerMs;
    const int64_t drift = want - input_position();
    if (drift > int64_t{kMaxGapMs} * kSamplesPerMs || drift < -int64_t{kMaxGapMs} * kSamplesPerMs) {
      finish(out);
      ++stats_.resets;
    }
  }
  if (!running_ && !start(timestamp, channels, pcm->sample_rate, out)) {
    ++stats_.skipped;
    return;
  }
  if (!match_resampler(pcm)) {
    ++stats_.skipped;
    return;
  }
  if (first_of_packet) skip_ = resync(timestamp);
  const int skip = static_cast<int>(std::min<int64_t>(skip_, pcm->nb_samples));
  skip_ -= skip;
  dropped_us_ += int64_t{skip} * 1000000 / pcm->sample_rate;
  stats_.dropped_ms = static_cast<uint64_t>(dropped_us_ / 1000);
  const int keep = pcm->nb_samples - skip;
  if (keep == 0) return;
  // The input past the skipped samples, in whatever layout the decoder gave.
  const auto format = static_cast<AVSampleFormat>(pcm->format);
  const bool planar = av_sample_fmt_is_planar(format);
  const int stride = av_get_bytes_per_sample(format) * (planar ? 1 : pcm->ch_layout.nb_channels);
  std::vector<const uint8_t*> in(static_cast<size_t>(planar ? pcm->ch_layout.nb_channels : 1));
  for (size_t i = 0; i < in.size(); ++i) in[i] = pcm->extended_data[i] + static_cast<ptrdiff_t>(skip) * stride;

  // Room for this frame's share plus what the resampler held back.
  const int room = swr_get_out_samples(resampler_.get(), keep);
  if (room < 0) {
    ++stats_.skipped;
    return;
  }
  std::vector<float> pcm48(static_cast<size_t>(room) * static_cast<size_t>(channels_));
  uint8_t* dst = reinterpret_cast<uint8_t*>(pcm48.data());
  const int made = swr_convert(resampler_.get(), &dst, room, in.data(), keep);
  if (made < 0) {
    ++stats_.skipped;
    return;
  }
  input_samples_ += keep;
  void* planes[1] = {pcm48.data()};
  av_audio_fifo_write(fifo_.get(), planes, made);
  encode_ready(out);
}

// Opens the encoder for a new timeline anchored at this frame's timestamp, and sends the
// OpusHead when it differs from the one the players have.
bool AacToOpus::start(uint32_t timestamp, int channels, int input_rate, std::vector<media::FramePtr>& out) {
  const AVCodec* codec = avcodec_find_encoder_by_name("libopus");
  std::unique_ptr<AVCodecContext, AvDeleter> ctx(codec ? avcodec_alloc_context3(codec) : nullptr);
  if (!ctx) return false;
  ctx->sample_rate = kRate;
  ctx->sample_fmt = AV_SAMPLE_FMT_FLT;
  av_channel_layout_default(&ctx->ch_layout, channels);
  ctx->bit_rate = channels == 1 ? kMonoBitrate : kStereoBitrate;
  av_opt_set(ctx->priv_data, "application", "audio", 0);
  av_opt_set(ctx->priv_data, "frame_duration", "20", 0);
  av_opt_set(ctx->priv_data, "packet_loss", kExpectedLoss, 0);
  av_opt_set(ctx->priv_data, "fec", "1", 0);
  if (avcodec_open2(ctx.get(), codec, nullptr) < 0 || ctx->frame_size != kFrameSamples) return false;
  std::unique_ptr<AVAudioFifo, AvDeleter> fifo(av_audio_fifo_alloc(AV_SAMPLE_FMT_FLT, channels, 4 * kFrameSamples));
  if (!fifo) return false;

  // The lookahead (312 samples, 6.5 ms, for libopus's "audio") is padded with silence up to a
  // whole millisecond, so that every packet's first decoded sample falls on a millisecond.
  const int lookahead = std::max(ctx->initial_padding, 0);
  const int pad = (kSamplesPerMs - lookahead % kSamplesPerMs) % kSamplesPerMs;
  std::vector<float> silence(static_cast<size_t>(pad) * static_cast<size_t>(channels), 0.0f);
  void* planes[1] = {silence.data()};
  if (pad > 0 && av_audio_fifo_write(fifo.get(), planes, pad) < pad) return false;

  encoder_ = std::move(ctx);
  fifo_ = std::move(fifo);
  resampler_.reset();
  input_rate_ = 0;
  channels_ = channels;
  delay_ms_ = (lookahead + pad) / kSamplesPerMs;
  packets_ = 0;
  base_ = 0;
  input_samples_ = 0;
  anchor_ = timestamp;
  // A new timeline that would start inside the last one (a channel change, a takeover whose
  // timestamps carry on) moves just behind it, so that stamps never go back; resync() then drops
  // the audio it now overlaps. A real backward jump is followed.
  const uint32_t first_stamp = anchor_ - static_cast<uint32_t>(delay_ms_);
  const auto behind = static_cast<int32_t>(sent_end_ - first_stamp);
  if (sent_any_ && behind > 0 && behind <= kMaxGapMs) anchor_ += static_cast<uint32_t>(behind);
  running_ = true;

  media::OpusHead head;
  head.channels = static_cast<uint8_t>(channels);
  head.pre_skip = static_cast<uint16_t>(lookahead + pad);
  head.input_sample_rate = static_cast<uint32_t>(input_rate);
  std::vector<uint8_t> bytes = media::opus_head_bytes(head);
  if (bytes != head_) {
    head_ = std::move(bytes);
    out.push_back(media::make_frame(protocol::msg_type::kAudio, anchor_ - static_cast<uint32_t>(delay_ms_),
                                    Slice::adopt(media::opus_sequence_header_body(head))));
  }
  return true;
}

// A decoded frame in another format, rate or layout than the resampler takes (the first frame,
// a new AudioSpecificConfig, implicit SBR doubling the rate) gets a new resampler; the old one's
// last samples go to the FIFO first. A downmix (5.1 to stereo) is scaled so that it cannot clip.
bool AacToOpus::match_resampler(AVFrame* pcm) {
  if (resampler_ && pcm->sample_rate == input_rate_ && pcm->format == input_format_ &&
      pcm->ch_layout.nb_channels == input_channels_ && layout_key(pcm->ch_layout) == input_layout_key_) {
    return true;
  }
  drain_resampler();
  base_ = input_position();
  input_samples_ = 0;
  resampler_.reset();
  AVChannelLayout out_layout;
  av_channel_layout_default(&out_layout, channels_);
  SwrContext* swr = nullptr;
  if (swr_alloc_set_opts2(&swr, &out_layout, AV_SAMPLE_FMT_FLT, kRate, &pcm->ch_layout,
                          static_cast<AVSampleFormat>(pcm->format), pcm->sample_rate, 0, nullptr) < 0 ||
      av_opt_set_double(swr, "rematrix_maxval", 1.0, 0) < 0 || swr_init(swr) < 0) {
    swr_free(&swr);
    input_rate_ = 0;
    return false;
  }
  resampler_.reset(swr);
  input_rate_ = pcm->sample_rate;
  input_format_ = pcm->format;
  input_channels_ = pcm->ch_layout.nb_channels;
  input_layout_key_ = layout_key(pcm->ch_layout);
  return true;
}

// The samples the resampler's filter still holds, into the FIFO (av_audio_fifo_write grows it).
void AacToOpus::drain_resampler() {
  if (!resampler_) return;
  const int room = swr_get_out_samples(resampler_.get(), 0);
  if (room <= 0) return;
  std::vector<float> tail(static_cast<size_t>(room) * static_cast<size_t>(channels_));
  uint8_t* dst = reinterpret_cast<uint8_t*>(tail.data());
  const int made = swr_convert(resampler_.get(), &dst, room, nullptr, 0);
  void* planes[1] = {tail.data()};
  if (made > 0) av_audio_fifo_write(fifo_.get(), planes, made);
}

int64_t AacToOpus::input_position() const {
  if (input_rate_ <= 0) return base_;
  return base_ + input_samples_ * kRate / input_rate_;
}

// Follows the input's timestamp when it is more than kResyncMs away from the sample count: a
// gap (a lost or corrupt frame) becomes silence; for an overlap (audio sent again, a timeline
// moved behind the last one), gives the number of this packet's input samples to leave out.
int64_t AacToOpus::resync(uint32_t timestamp) {
  const int64_t want = int64_t{static_cast<int32_t>(timestamp - anchor_)} * kSamplesPerMs;
  const int64_t drift = want - input_position();
  if (drift > int64_t{kResyncMs} * kSamplesPerMs) {
    const int64_t missing = drift * input_rate_ / kRate;
    if (swr_inject_silence(resampler_.get(), static_cast<int>(missing)) >= 0) {
      input_samples_ += missing;
      stats_.silence_ms += static_cast<uint64_t>(drift / kSamplesPerMs);
    }
  } else if (drift < -int64_t{kResyncMs} * kSamplesPerMs) {
    return -drift * input_rate_ / kRate;
  }
  return 0;
}

void AacToOpus::encode_ready(std::vector<media::FramePtr>& out) {
  while (av_audio_fifo_size(fifo_.get()) >= kFrameSamples) {
    AVFrame* b = block_.get();
    av_frame_unref(b);
    b->nb_samples = kFrameSamples;
    b->format = AV_SAMPLE_FMT_FLT;
    b->sample_rate = kRate;
    av_channel_layout_default(&b->ch_layout, channels_);
    if (av_frame_get_buffer(b, 0) < 0) return;
    av_audio_fifo_read(fifo_.get(), reinterpret_cast<void**>(b->data), kFrameSamples);
    b->pts = packets_ * kFrameSamples;  // only for libavcodec's bookkeeping; stamps are ours
    encode_frame(b, out);
  }
}

// Sends one block (or nullptr: drain) and turns every packet out of the encoder into a hub frame.
// Packet n's first decoded sample is input sample 960 n - delay: its stamp is anchor + 20 n - delay.
void AacToOpus::encode_frame(AVFrame* pcm, std::vector<media::FramePtr>& out) {
  if (avcodec_send_frame(encoder_.get(), pcm) < 0) return;
  AVPacket* pkt = av_packet_alloc();
  if (!pkt) return;
  while (avcodec_receive_packet(encoder_.get(), pkt) >= 0) {
    const uint32_t stamp = anchor_ + static_cast<uint32_t>(packets_ * 20 - delay_ms_);
    ++packets_;
    ++stats_.packets_out;
    out.push_back(media::make_frame(protocol::msg_type::kAudio, stamp,
                                    Slice::adopt(media::opus_frame_body({pkt->data, static_cast<size_t>(pkt->size)}))));
    sent_any_ = true;
    sent_end_ = stamp + 20;
    av_packet_unref(pkt);
  }
  av_packet_free(&pkt);
}

// Ends the timeline: the resampler's tail, the last partial block padded with silence, then the
// encoder drained of its lookahead. The next decoded frame starts a new one.
void AacToOpus::finish(std::vector<media::FramePtr>& out) {
  if (!running_) return;
  drain_resampler();
  const int partial = av_audio_fifo_size(fifo_.get()) % kFrameSamples;
  if (partial > 0) {
    std::vector<float> silence(static_cast<size_t>(kFrameSamples - partial) * static_cast<size_t>(channels_), 0.0f);
    void* planes[1] = {silence.data()};
    av_audio_fifo_write(fifo_.get(), planes, kFrameSamples - partial);
  }
  encode_ready(out);
  encode_frame(nullptr, out);
  encoder_.reset();
  resampler_.reset();
  fifo_.reset();
  input_rate_ = 0;
  running_ = false;
}

}  // namespace sluice::server
