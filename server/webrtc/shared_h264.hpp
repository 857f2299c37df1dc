// SharedH264: one H.264 packetisation per frame for all WHEP players of a stream on one loop
// (docs/webrtc.md, "Playing"). The first player to reach a frame has it packetised
// (media/rtp/h264_packetizer.hpp) and the payloads are kept on the frame itself
// (media::Frame::rtp_cache, like the RTMP wire body): every other player only writes its own
// 12-byte header in front. The cache lives as long as the frame (the GOP cache and the players'
// queues), so a joining player replaying the GOP finds it there too.
//
// The packetiser's one piece of state is the stream's decoder configuration (SPS, PPS, NAL length
// size), taken from each sequence header a player passes; players all read the stream in its
// order, so a frame is packetised with the configuration in force when it was published (a
// player far behind a mid-stream configuration change is the exception: it gets the new one).
#pragma once

#include "media/frame.hpp"
#include "media/rtp/h264_packetizer.hpp"

namespace sluice::server {

class SharedH264 {
 public:
  // The RTP payloads of a video frame, or nullptr for a sequence header or a frame that gives
  // none; valid while the frame is.
  const media::rtp::PacketizedFrame* packets_of(const media::Frame& video);
  const media::rtp::H264Packetizer::Stats& stats() const { return packetizer_.stats(); }

 private:
  media::rtp::H264Packetizer packetizer_;
};

}  // namespace sluice::server
