// What the depacketisers (media/rtp/h264_depacketizer.hpp, opus_rtp.hpp) hand the hub: a tag
// body in the canonical form (media/frame.hpp) with its time, both in milliseconds from the
// stream's first packet and as the extended RTP time, so the server can line tracks up by their
// sender reports (docs/rtp.md, "Times").
#pragma once

#include <cstdint>
#include <vector>

namespace sluice::media::rtp {

struct DepacketizedFrame {
  uint8_t type = 0;  // FLV tag type: 8 audio, 9 video
  std::vector<uint8_t> body;
  uint32_t timestamp_ms = 0;  // from the first packet's RTP time, which is 0 ms
  int64_t rtp_time = 0;       // the RTP timestamp extended to 64 bits
  bool keyframe = false;
  bool sequence_header = false;
};

}  // namespace sluice::media::rtp
