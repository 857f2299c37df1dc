// H264Packetizer: the hub's H.264 video tag bodies (legacy AVC or Enhanced RTMP 'avc1': AVCC NAL
// units behind 4-byte, or the record's, lengths) to RTP payloads in packetization mode 1
// (docs/rtp.md, "H.264 over RTP"). Sans-I/O, and built once per frame for every player.
//
// Rules:
//  1. A sequence header's AVCDecoderConfigurationRecord gives the SPS, PPS and NAL length size.
//     Frames before the first one, multitrack and unparsable bodies give no payloads (counted).
//  2. Access unit delimiters and filler data are left out, and so are units of type 0 or 24-31
//     (unspecified in H.264, and RTP's own aggregate and fragment types). A keyframe (an IDR slice) without an
//     SPS of its own gets the record's SPS and PPS in front, so a player can start on it.
//  3. Consecutive NAL units that fit together in one payload go as a STAP-A (two or more; the
//     SPS+PPS+small SEI in front of an IDR are the usual ones); a NAL unit alone that fits goes as
//     a single NAL unit packet; a bigger one as FU-A fragments of nearly equal size.
//  4. The marker bit belongs on the frame's last payload. The RTP timestamp is the presentation
//     time (DTS + composition offset, ms) times 90, modulo 2^32, as the ms clock is.
//  5. All payloads of a frame are slices of one buffer: one allocation per frame; a player only
//     writes its own 12-byte header in front (media/rtp/rtp_packet.hpp write_fixed_header, with
//     its sequence numbers from media/rtp/rtp_history.hpp SequenceRewriter).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "base/bytes.hpp"

namespace sluice::media::rtp {

// An Ethernet MTU less IPv6, UDP, SRTP's tag, the RTP header and its usual extensions: what
// browsers use too.
inline constexpr size_t kDefaultMaxPayload = 1200;

// One frame's payloads, in sending order; the last carries the marker bit.
struct PacketizedFrame {
  uint32_t timestamp = 0;  // RTP time (90 kHz) of the presentation time
  bool keyframe = false;
  std::vector<Slice> payloads;
};

class H264Packetizer {
 public:
  struct Stats {
    uint64_t frames = 0;
    uint64_t payloads = 0;
    uint64_t dropped = 0;  // bodies that gave nothing (rule 1), or only AUDs and filler
  };

  explicit H264Packetizer(size_t max_payload = kDefaultMaxPayload);

  // A video tag body and its timestamp (the DTS, ms). A sequence header is taken and gives false;
  // a coded frame fills `out` (its payloads replaced) and gives true.
  bool packetize(std::span<const uint8_t> body, uint32_t timestamp_ms, PacketizedFrame& out);

  bool has_config() const { return !sps_.empty() && !pps_.empty(); }
  const Stats& stats() const { return stats_; }

 private:
  bool take_config(std::span<const uint8_t> record);
  void build(const std::vector<std::span<const uint8_t>>& nals, PacketizedFrame& out);

  size_t max_payload_;
  uint8_t length_size_ = 4;
  std::vector<std::vector<uint8_t>> sps_, pps_;
  Stats stats_;
};

}  // namespace sluice::media::rtp
