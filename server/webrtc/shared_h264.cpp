#include "server/webrtc/shared_h264.hpp"

#include <memory>

namespace sluice::server {

const media::rtp::PacketizedFrame* SharedH264::packets_of(const media::Frame& video) {
  if (video.rtp_cache) return video.rtp_cache.get();
  media::rtp::PacketizedFrame out;
  if (!packetizer_.packetize(video.payload.span(), video.timestamp, out)) return nullptr;
  auto kept = std::make_shared<const media::rtp::PacketizedFrame>(std::move(out));
  video.rtp_cache = kept;
  return kept.get();
}

}  // namespace sluice::server
