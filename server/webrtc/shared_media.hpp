// What the WHEP players of one stream on one loop share (docs/webrtc.md, "Playing"): the
// stream's AAC made Opus once (server/webrtc/shared_opus.hpp) and its H.264 packetised once per
// frame (server/webrtc/shared_h264.hpp). WebrtcService hands one out per stream key while a
// player holds it.
#pragma once

#include "server/webrtc/shared_h264.hpp"
#include "server/webrtc/shared_opus.hpp"

namespace sluice::server {

struct SharedMedia {
  SharedOpus opus;
  SharedH264 video;
};

}  // namespace sluice::server
