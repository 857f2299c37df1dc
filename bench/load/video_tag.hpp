// What the first bytes of an FLV/RTMP video message say: is it a picture, and is it a keyframe?
//
// Time to first frame must skip what is not a picture: AVC/HEVC sequence headers and end-of-
// sequence markers, Enhanced-RTMP SequenceStart/SequenceEnd/Metadata, and video info/command
// frames. Otherwise every first "frame" would be a sequence header, which is always flagged as a
// keyframe, and the keyframe count would say nothing.
#pragma once

#include <cstdint>
#include <span>

namespace sluice::bench {

struct VideoTagInfo {
  bool picture = false;   // carries coded picture data
  bool keyframe = false;  // frame type 1 (key frame)
};

inline VideoTagInfo classify_video(std::span<const uint8_t> p) {
  constexpr uint8_t kKeyFrame = 1;
  constexpr uint8_t kInfoFrame = 5;  // video info / command frame: no picture
  VideoTagInfo info;
  if (p.empty()) return info;
  const uint8_t b0 = p[0];
  if (b0 & 0x80) {
    // Enhanced RTMP: [IsExHeader:1][FrameType:3][PacketType:4].
    constexpr uint8_t kCodedFrames = 1, kCodedFramesX = 3, kMultitrack = 6;
    const uint8_t frame_type = (b0 >> 4) & 0x07;
    const uint8_t packet_type = b0 & 0x0f;
    info.picture = frame_type != kInfoFrame &&
                   (packet_type == kCodedFrames || packet_type == kCodedFramesX || packet_type == kMultitrack);
    info.keyframe = frame_type == kKeyFrame;
    return info;
  }
  // Legacy FLV: [FrameType:4][CodecID:4]; AVC (7) and the common HEVC extension (12) add an
  // AVCPacketType byte where 1 is a NAL unit and 0/2 are sequence header / end of sequence.
  constexpr uint8_t kAvc = 7, kHevcLegacy = 12, kNalu = 1;
  const uint8_t frame_type = b0 >> 4;
  const uint8_t codec = b0 & 0x0f;
  info.keyframe = frame_type == kKeyFrame;
  if (frame_type == kInfoFrame) return info;
  if (codec == kAvc || codec == kHevcLegacy) {
    info.picture = p.size() >= 2 && p[1] == kNalu;
  } else {
    info.picture = true;
  }
  return info;
}

}  // namespace sluice::bench
