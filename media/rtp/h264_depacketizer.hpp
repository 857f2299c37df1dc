// H264Depacketizer: RTP packets of an H.264 stream in packetization mode 0 or 1 (docs/rtp.md,
// "H.264 over RTP") to the hub's canonical video tag bodies: AVCC frames and, when the SPS or PPS
// arrive or change, the sequence header before them (media/codec/nal_packer.hpp does both).
// Sans-I/O: packets in sequence order (media/rtp/reorder_buffer.hpp puts them so), frames out.
//
// Rules:
//  1. An access unit is the packets of one RTP timestamp; it ends at the marker bit, or when a
//     packet of another timestamp comes.
//  2. Single NAL unit packets (types 1-23), STAP-A (24) and FU-A (28) are taken; other types
//     (STAP-B, MTAP, FU-B, reserved), and units of type 0 or 24-31 inside a STAP-A, are skipped and
//     counted. A STAP-A whose sizes run past it, a FU-A that starts a unit of type 0 or 24-31, or
//     a FU-A that continues a unit whose start was not seen, damages its access unit.
//  3. A gap in the sequence numbers damages the access unit it fell into, and the next one
//     unless that one's first packet starts a NAL unit right after a marker bit. A damaged access
//     unit is dropped whole (counted) and a keyframe is wanted: take_keyframe_request() says so
//     once, and the server turns it into a PLI. Other frames go on: only the damaged one is lost.
//  4. Bounds: an access unit past Limits::max_access_unit_bytes or Limits::max_nal_units is
//     dropped as damaged; nothing grows past them whatever comes.
//  5. The composition offset is 0: RTP carries the presentation time only, and WebRTC encoders
//     send no B-frames.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "media/codec/nal_packer.hpp"
#include "media/rtp/depacketized_frame.hpp"
#include "media/rtp/rtp_packet.hpp"
#include "media/rtp/rtp_sequence.hpp"

namespace sluice::media::rtp {

class H264Depacketizer {
 public:
  struct Limits {
    size_t max_access_unit_bytes = size_t{4} << 20;  // far past any live encoder's keyframe
    size_t max_nal_units = 1024;                     // slices and SEI of one picture
  };
  struct Stats {
    uint64_t packets = 0;
    uint64_t frames = 0;           // frame bodies out (sequence headers not counted)
    uint64_t lost_packets = 0;     // sequence numbers never seen
    uint64_t damaged_frames = 0;   // access units dropped (rules 2-4)
    uint64_t unknown_packets = 0;  // payloads and units skipped (rule 2)
    uint64_t malformed_packets = 0;
    uint64_t stale_packets = 0;  // a sequence number at or behind the last one
    uint64_t unpacked = 0;       // access units NalPacker dropped (no SPS/PPS yet, no picture)
  };

  H264Depacketizer() : H264Depacketizer(Limits{}) {}
  explicit H264Depacketizer(Limits limits) : limits_(limits), packer_(VideoCodec::Avc) {}

  // One packet, in sequence order; the frames it completes are appended to `out`.
  void push(const RtpPacketView& packet, std::vector<DepacketizedFrame>& out);
  // The stream ended: an access unit still open goes out if it is whole but for its marker.
  void flush(std::vector<DepacketizedFrame>& out);

  // True once after a loss (rule 3): the sender should be asked for a keyframe.
  bool take_keyframe_request() { return std::exchange(keyframe_wanted_, false); }
  const Stats& stats() const { return stats_; }

 private:
  void on_gap(const RtpPacketView& p, int64_t time);
  void begin(int64_t time);
  void payload(std::span<const uint8_t> payload);
  void nal(std::span<const uint8_t> nal);
  void fragment(std::span<const uint8_t> payload);
  bool room_for(size_t bytes);
  void finish(std::vector<DepacketizedFrame>& out);
  void damage();

  Limits limits_;
  NalPacker packer_;
  Stats stats_;
  TimestampUnwrapper clock_;
  int64_t origin_ = 0;  // the RTP time that is 0 ms
  SequenceGate gate_;
  bool keyframe_wanted_ = false;
  bool next_damaged_ = false;  // the next access unit lost its start (rule 3)
  // The access unit being assembled: NAL units behind 4-byte lengths.
  bool open_ = false;
  bool damaged_ = false;
  int64_t time_ = 0;
  std::vector<uint8_t> au_;
  size_t nal_units_ = 0;
  bool in_fragment_ = false;
  size_t fragment_at_ = 0;  // where the open FU-A unit's length is
  std::vector<NalPacker::Body> bodies_;
};

}  // namespace sluice::media::rtp
