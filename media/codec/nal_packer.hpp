// NalPacker: access units given as NAL units (from an MPEG-TS source's Annex B byte stream, and
// later from RTP) become the FLV video tag bodies the hub carries (docs/protocol.md, "Legacy audio
// and video tag headers", "ExVideoTagHeader"): H.264 in the legacy form (0x17 / 0x27, AVCPacketType,
// composition time), HEVC in Enhanced RTMP's ('hvc1', CodedFrames with a composition time, or
// CodedFramesX when it is 0). NAL units are written behind 4-byte lengths.
//
// Rules:
//  1. Parameter sets leave the frames and make the sequence header (config_record.hpp): it goes
//     out before the first frame, and again before a frame whose access unit brings different
//     ones. An access unit that brings some types only keeps the current ones of the others.
//  2. Access unit delimiters and filler data are dropped: an FLV frame is delimited already.
//  3. Frames before the first sequence header are dropped (nothing could decode them) and counted,
//     as are access units with nothing left to decode.
//  4. A keyframe is an access unit with an IDR slice (H.264) or an IRAP picture (HEVC, types 16..21).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "media/codec/config_record.hpp"
#include "media/codec/flv_video.hpp"

namespace sluice::media {

// The NAL units of an Annex B byte stream (each behind a 00 00 01 or 00 00 00 01 start code),
// without their start codes and trailing zero bytes; bytes before the first start code are not
// a NAL unit and are skipped.
NalList split_annexb(std::span<const uint8_t> stream);

class NalPacker {
 public:
  struct Body {
    std::vector<uint8_t> bytes;
    bool keyframe = false;
    bool sequence_header = false;
  };

  explicit NalPacker(VideoCodec codec) : codec_(codec) {}

  // One access unit: appends the sequence header when it is new (rule 1), then the frame.
  // cts_ms: the composition offset (pts - dts), 24 bits signed.
  void pack(const NalList& nals, int32_t cts_ms, std::vector<Body>& out);

  VideoCodec codec() const { return codec_; }
  uint64_t dropped() const { return dropped_; }

 private:
  bool update_parameter_sets(const NalList& nals);
  void frame(const NalList& nals, bool keyframe, int32_t cts_ms, std::vector<Body>& out) const;

  VideoCodec codec_;
  std::vector<std::vector<uint8_t>> vps_, sps_, pps_;
  std::vector<uint8_t> record_;  // the last sequence header's record; empty before the first
  uint64_t dropped_ = 0;
};

}  // namespace sluice::media
