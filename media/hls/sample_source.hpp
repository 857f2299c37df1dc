// SampleSource: a live stream's frames (media/frame.hpp) as HLS samples and track setups
// (sample.hpp). Sequence headers become the setup of their track; coded frames become samples
// with 64-bit 90 kHz times, unwrapped from the modular millisecond timestamps; everything else
// (metadata, commands, codecs HLS cannot carry) is nothing.
//
// The FLV forms understood are those of media/flv/flv_tag_head.hpp: legacy and Enhanced RTMP
// AVC/HEVC, legacy and Enhanced AAC. The composition offset is the FLV one (legacy and Enhanced
// CodedFrames carry it, CodedFramesX means 0). MP3 and other codecs are left out: `skipped()`
// names them for a log line.
#pragma once

#include <cstdint>
#include <string>

#include "base/bytes.hpp"
#include "media/frame.hpp"
#include "media/hls/sample.hpp"

namespace sluice::media::hls {

class SampleSource {
 public:
  enum class Kind : uint8_t { Nothing, Setup, Sample };
  struct Out {
    Kind kind = Kind::Nothing;
    Sample sample;  // Kind::Sample: duration 0 (the segmenter knows it once the next one comes)
    Slice keep;     // Kind::Sample: keeps sample.data alive
  };

  // Reads one frame. Kind::Setup means setup() changed (a new or different configuration).
  Out read(const Frame& f);

  const StreamSetup& setup() const { return setup_; }
  // The first codec seen that HLS cannot carry ("MP3", "VP6", ...), empty when none.
  const std::string& skipped() const { return skipped_; }
  // Forget the timeline: the next frame starts a new one (a new publication).
  void reset_clock() { have_clock_ = false; }

 private:
  bool take_config(bool video, int codec, std::span<const uint8_t> record);
  uint64_t unwrap(uint32_t ts);

  StreamSetup setup_;
  std::string skipped_;
  bool have_clock_ = false;
  uint32_t last_ts_ = 0;
  int64_t clock_ms_ = 0;
};

}  // namespace sluice::media::hls
