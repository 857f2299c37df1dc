// OpusToAac: a WHIP publisher's Opus (canonical Opus frames from the depacketiser) made into the
// AAC-LC that RTMP, HTTP-FLV, TS-HLS players and recordings take (docs/webrtc-audio.md, "Audio
// across worlds").
//
// Input: hub audio frames with an Enhanced RTMP 'Opus' body (media/codec/opus.hpp), one Opus
// packet each, stamped with the time of its first sample (as RTP times it). Output: FLV AAC tag
// bodies, 48 kHz stereo at 128 kb/s: first a sequence header (0xAF 0x00 + the encoder's
// AudioSpecificConfig), then one raw frame (0xAF 0x01 + 1024 samples) each.
//
// Times: an AAC frame is stamped with the time of its first decoded sample, counting the AAC
// encoder's priming (1024 samples), so the first frame of a timeline is stamped 21 ms before the
// first Opus packet. The stamp is computed from the frame's exact 48 kHz sample position and
// rounded to the nearest millisecond, never accumulated: steps go 21, 21, 22 ms (64/3 on
// average) with no drift. Lost packets (a gap in the stamps up to kMaxGapMs) become silence; a
// larger jump starts a new timeline.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "media/frame.hpp"
#include "server/webrtc/av_decode.hpp"

struct AVCodecContext;
struct AVAudioFifo;
struct AVFrame;

namespace sluice::server {

class OpusToAac {
 public:
  // Beyond this a gap or jump starts a new timeline. Under it a gap is filled with silence: lost
  // packets, and the 400 ms between a DTX sender's packets in a pause, where silence is right.
  static constexpr int kMaxGapMs = 1000;
  // RTP's 48 kHz clock is exact and the hub's stamps round it to the millisecond; a stamp further
  // than this from the sample count means lost (or repeated) packets, the shortest being 10 ms.
  static constexpr int kResyncMs = 5;
  static constexpr int kFrameSamples = 1024;  // one AAC-LC frame

  struct Stats {
    uint64_t frames_in = 0;   // Opus frames taken (sequence headers included)
    uint64_t frames_out = 0;  // AAC raw frames made
    uint64_t skipped = 0;     // frames dropped: not decodable, or of more than two channels
    uint64_t resets = 0;      // new timelines after the first
    uint64_t silence_ms = 0;  // gaps filled with silence
    uint64_t dropped_ms = 0;  // repeated or late audio dropped
  };

  OpusToAac();
  ~OpusToAac();
  OpusToAac(const OpusToAac&) = delete;
  OpusToAac& operator=(const OpusToAac&) = delete;

  // Takes one hub frame and appends the AAC frames it completes (a sequence header first) to out.
  // Never throws; what cannot be decoded is counted in stats().skipped.
  void push(const media::Frame& frame, std::vector<media::FramePtr>& out);
  // The stream ended: encodes what is buffered (padded with silence) and drains the encoder.
  void flush(std::vector<media::FramePtr>& out);

  const Stats& stats() const { return stats_; }

 private:
  void decode(const uint8_t* data, size_t size, uint32_t timestamp, std::vector<media::FramePtr>& out);
  void take(const AVFrame* pcm, uint32_t timestamp, bool first_of_packet, std::vector<media::FramePtr>& out);
  bool start(uint32_t timestamp, std::vector<media::FramePtr>& out);
  int64_t resync(uint32_t timestamp);
  void write_silence(int samples);
  void encode_ready(std::vector<media::FramePtr>& out);
  void encode_frame(AVFrame* pcm, std::vector<media::FramePtr>& out);
  void finish(std::vector<media::FramePtr>& out);

  Stats stats_;
  bool multichannel_ = false;  // the last OpusHead named more than two channels
  std::unique_ptr<AVCodecContext, AvDeleter> decoder_;
  std::unique_ptr<AVFrame, AvDeleter> decoded_;
  std::unique_ptr<AVFrame, AvDeleter> block_;  // one AAC frame's samples on their way in

  // The timeline: 48 kHz sample positions from anchor_ (an input stamp).
  bool running_ = false;
  uint32_t anchor_ = 0;
  int64_t position_ = 0;  // where the next decoded sample lands
  int64_t skip_ = 0;      // samples of the current packet still to leave out
  int64_t dropped_ = 0;   // samples left out, for stats_.dropped_ms
  int64_t frames_ = 0;    // AAC frames out of this timeline's encoder
  int priming_ = 0;       // the encoder's initial padding, in samples
  std::unique_ptr<AVCodecContext, AvDeleter> encoder_;
  std::unique_ptr<AVAudioFifo, AvDeleter> fifo_;
  bool sent_any_ = false;
  uint32_t sent_end_ = 0;     // the end of the last frame sent: a new timeline starts no earlier
  std::vector<uint8_t> asc_;  // the AudioSpecificConfig last sent
};

}  // namespace sluice::server
