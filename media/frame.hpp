// Frame: one media message as the live hub fans it out. Created once at ingest, immutable after
// that, and shared by every subscriber, recorder and HTTP-FLV reader through a FramePtr.
#pragma once

#include <cstdint>
#include <memory>

#include "base/bytes.hpp"

namespace sluice::media {

namespace rtp {
struct PacketizedFrame;
}

enum class FrameKind : uint8_t { Audio, Video, Data };

struct Frame {
  FrameKind kind = FrameKind::Data;
  uint8_t rtmp_type = 0;   // 8 audio, 9 video, 18 (or 15) data
  uint32_t timestamp = 0;  // ms, modular (compare with (int32_t)(a - b))
  Slice payload;           // the FLV tag body == the RTMP message payload

  // Classified once at ingest so the hot path never parses.
  bool keyframe = false;         // a coded video key frame: a GOP starts here
  bool sequence_header = false;  // codec configuration (AVC/HEVC/AAC sequence header, SequenceStart)
  bool metadata = false;         // onMetaData
  uint32_t track = 0;            // E-RTMP track id (0 = default); the first track of a multitrack message

  // (copy_frame copies every field above.)
  // The server's pre-chunked wire body, built once by the first subscriber that needs it, on the
  // loop that fans this frame out (another loop fans out a copy_frame); the key says which
  // chunking (chunk size, csid) it was built for.
  mutable Slice wire_cache;
  mutable uint32_t wire_cache_key = 0;
  // The same for WHEP players: the frame's RTP payloads, packetised once per loop by the first
  // player that reaches it (server/webrtc/shared_h264.hpp).
  mutable std::shared_ptr<const rtp::PacketizedFrame> rtp_cache;
};

using FramePtr = std::shared_ptr<const Frame>;

// Type 8 is audio, 9 video, anything else data: the kind make_frame gives a message.
FrameKind frame_kind(uint8_t rtmp_type);

// Builds and classifies a frame. Type 8 is audio, 9 video, anything else data. For an AMF0 data
// message that starts with "@setDataFrame", the frame's payload is re-sliced to start at the
// handler name after it (no copy): that is what subscribers and recordings must receive.
// Garbage payloads are never an error here: they become unclassified frames and are relayed.
FramePtr make_frame(uint8_t rtmp_type, uint32_t timestamp, Slice payload);

// The same message over a private copy of its payload, without a wire body: what another worker
// loop fans out. Its players then count references on memory of their own loop; on the frame
// they shared with the owner's players every reference was an atomic on a cache line the two
// cores took from each other, per player and message (docs/live.md, "Many players, many cores").
FramePtr copy_frame(const Frame& f);

}  // namespace sluice::media
