// AacToOpus: one stream's AAC (as RTMP, SRT and pulled publishers put it in the hub) made into the
// Opus that WebRTC players need (docs/webrtc-audio.md, "Audio across worlds").
//
// Input: hub audio frames with an FLV AAC tag body (0xAF 0x00 + AudioSpecificConfig, 0xAF 0x01 +
// one raw AAC frame); frames of another codec are ignored. Output: canonical Opus frames
// (media/codec/opus.hpp): a SequenceStart with an OpusHead first, then one CodedFrames per 20 ms
// packet. Decoding, resampling to 48 kHz and encoding run inside push(), on the caller's thread.
//
// Times: an output packet is stamped with the time of its first decoded sample, counting the
// encoder's lookahead, which is rounded up to a whole millisecond with leading silence and named
// as the OpusHead's pre-skip (7 ms with libopus). The first packet of a timeline is therefore
// stamped 7 ms before the first AAC frame; stamps then step by exactly 20 ms. Small gaps in the
// input are filled with silence and overlaps dropped, so that audio stays where its timestamps
// say; a jump of more than kMaxGapMs starts a new timeline.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "media/frame.hpp"
#include "server/webrtc/av_decode.hpp"

struct AVCodecContext;
struct AVAudioFifo;
struct SwrContext;
struct AVFrame;

namespace sluice::server {

class AacToOpus {
 public:
  // A gap or jump of the input's timestamps beyond this starts a new timeline: a takeover or a
  // publisher that paused is not worth minutes of invented silence.
  static constexpr int kMaxGapMs = 1000;
  // Timestamps further than this from where the decoded audio has got to are followed (silence
  // inserted, or audio dropped); closer, the sample count is trusted. RTMP publishers' timestamps
  // are whole milliseconds and some jitter; a lost or corrupt AAC frame (21-46 ms) is above it.
  static constexpr int kResyncMs = 20;
  static constexpr int kFrameSamples = 960;  // 20 ms at 48 kHz: what WebRTC players expect

  struct Stats {
    uint64_t frames_in = 0;    // AAC frames taken (sequence headers included)
    uint64_t packets_out = 0;  // Opus packets made
    uint64_t skipped = 0;      // frames dropped: corrupt, before any sequence header, or a bad config
    uint64_t resets = 0;       // new timelines after the first: a jump, a channel count change
    uint64_t silence_ms = 0;   // gaps filled with silence
    uint64_t dropped_ms = 0;   // overlapping audio dropped
  };

  AacToOpus();
  ~AacToOpus();
  AacToOpus(const AacToOpus&) = delete;
  AacToOpus& operator=(const AacToOpus&) = delete;

  // Takes one hub frame and appends the Opus frames it completes to out (often none: a packet
  // needs 20 ms of audio). Never throws; what cannot be decoded is counted in stats().skipped.
  void push(const media::Frame& frame, std::vector<media::FramePtr>& out);
  // The stream ended: encodes what is buffered (the last packet padded with silence, and the
  // encoder's lookahead) and forgets the timeline; a later push starts a new one.
  void flush(std::vector<media::FramePtr>& out);

  const Stats& stats() const { return stats_; }

 private:
  void configure(const uint8_t* asc, size_t size);
  void decode(const uint8_t* data, size_t size, uint32_t timestamp, std::vector<media::FramePtr>& out);
  void take(AVFrame* pcm, uint32_t timestamp, bool first_of_packet, std::vector<media::FramePtr>& out);
  bool start(uint32_t timestamp, int channels, int input_rate, std::vector<media::FramePtr>& out);
  bool match_resampler(AVFrame* pcm);
  void drain_resampler();
  int64_t resync(uint32_t timestamp);
  int64_t input_position() const;
  void encode_ready(std::vector<media::FramePtr>& out);
  void encode_frame(AVFrame* pcm, std::vector<media::FramePtr>& out);
  void finish(std::vector<media::FramePtr>& out);

  Stats stats_;
  std::vector<uint8_t> asc_;  // the AudioSpecificConfig the decoder was opened with
  std::unique_ptr<AVCodecContext, AvDeleter> decoder_;
  std::unique_ptr<AVFrame, AvDeleter> decoded_;

  // The timeline: 48 kHz sample positions counted from anchor_ (an input timestamp). The
  // encoder, resampler and FIFO live exactly as long as one timeline.
  bool running_ = false;
  uint32_t anchor_ = 0;
  int channels_ = 0;
  std::unique_ptr<AVCodecContext, AvDeleter> encoder_;
  std::unique_ptr<SwrContext, AvDeleter> resampler_;
  std::unique_ptr<AVAudioFifo, AvDeleter> fifo_;
  std::unique_ptr<AVFrame, AvDeleter> block_;  // one 20 ms block on its way into the encoder
  int delay_ms_ = 0;                           // the encoder's lookahead plus its padding
  int64_t packets_ = 0;                        // packets out of this timeline's encoder
  // Where the resampler's next input sample lands: base_ plus the input samples since, at the
  // rate the resampler takes (kept as a count so that 44.1 kHz never drifts by rounding).
  int64_t base_ = 0;
  int64_t input_samples_ = 0;
  int64_t skip_ = 0;        // input samples of the current packet still to leave out
  int64_t dropped_us_ = 0;  // what was left out, for stats_.dropped_ms
  int input_rate_ = 0;
  int input_format_ = -1;
  uint64_t input_layout_key_ = 0;
  int input_channels_ = 0;
  // The end of the last packet sent, so that a new timeline never starts behind it.
  bool sent_any_ = false;
  uint32_t sent_end_ = 0;
  std::vector<uint8_t> head_;  // the OpusHead last sent
};

}  // namespace sluice::server
