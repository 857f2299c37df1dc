// WhipReceiver: a WHIP publisher's RTP, made hub frames (docs/webrtc.md, "Publishing"). Unprotected
// RTP packets come in; each track (by the payload type our answer took) passes a ReorderBuffer
// (media/rtp/reorder_buffer.hpp) and its depacketiser: H.264 access units become AVC tag bodies
// with their sequence header (media/rtp/h264_depacketizer.hpp), Opus packets become AAC through an
// OpusToAac bridge (server/webrtc/opus_to_aac.hpp: RTMP, HTTP-FLV, HLS and recordings take AAC).
//
// Timestamps: each track's RTP clock starts at 0 ms at its first packet; the two are put on one
// timeline by when their first packets arrived (the publisher's sender reports would say it
// exactly: not read yet), so audio and video start in step within the network's jitter.
// Repair and feedback (docs/webrtc.md, "Publishing"): a missing video packet is asked for again
// (NACK, protocol/webrtc/nack_generator.hpp) while the reorder step waits for it; the answer
// comes back as RTX (media/rtp/rtx.hpp) or as the packet itself. Each track's receive statistics
// go back in receiver reports, which the publisher's congestion control reads.
// A lost packet that the reorder step gives up on costs the frame, and the depacketiser asks for
// a keyframe: keyframe_wanted() is then true once (the session sends a PLI).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "base/bytes.hpp"
#include "media/rtp/h264_depacketizer.hpp"
#include "media/rtp/opus_rtp.hpp"
#include "media/rtp/reorder_buffer.hpp"
#include "protocol/webrtc/nack_generator.hpp"
#include "protocol/webrtc/receive_statistics.hpp"
#include "server/webrtc/opus_to_aac.hpp"

namespace sluice::server {

class WhipReceiver {
 public:
  using OnFrame = std::function<void(uint8_t type, uint32_t timestamp, Slice body)>;

  struct PayloadTypes {
    uint8_t video = 0;  // 0: no such track
    uint8_t video_rtx = 0;
    uint8_t audio = 0;
  };
  WhipReceiver(PayloadTypes types, OnFrame on_frame);
  ~WhipReceiver();

  // One RTP packet, SRTP already removed. Packets of other payload types (rtx, FEC) are counted.
  void on_rtp(std::span<const uint8_t> packet, uint64_t now_ms);
  // Gives up on gaps whose wait is over: call from a timer, every few tens of ms.
  void poll(uint64_t now_ms);
  // The publisher's sender report for one of its SSRCs (for the LSR and DLSR of our reports).
  void on_sender_report(uint32_t ssrc, uint64_t ntp_time, uint64_t now_ms);
  // The video sequence numbers to ask for again now (each ask counts as a try).
  void nacks_due(uint64_t now_ms, std::vector<uint16_t>& out);
  // A receiver report from `our_ssrc` with a block for each track that has started.
  void write_receiver_report(uint32_t our_ssrc, uint64_t now_ms, std::vector<uint8_t>& out);
  // The video SSRC, once a packet came, and whether a keyframe should be asked for (once).
  std::optional<uint32_t> video_ssrc() const { return video_.started ? std::optional(video_.ssrc) : std::nullopt; }
  std::vector<uint32_t> media_ssrcs() const;
  bool keyframe_wanted() { return h264_.take_keyframe_request(); }
  // When the last keyframe went to the hub (the loop's ms clock), or when video began when none
  // did yet; nothing before the first video packet.
  std::optional<uint64_t> last_keyframe_ms() const { return last_keyframe_ms_; }

  uint64_t frames() const { return frames_; }
  uint64_t foreign_packets() const { return foreign_; }
  uint64_t rtx_packets() const { return rtx_; }
  const protocol::webrtc::NackGenerator::Stats& nack_stats() const { return nack_.stats(); }
  int64_t lost_packets() const { return video_.stats.lost() + audio_.stats.lost(); }

 private:
  struct Track {
    Track(media::rtp::ReorderBuffer::Limits limits, uint32_t clock_rate) : reorder(limits), stats(clock_rate) {}
    media::rtp::ReorderBuffer reorder;
    protocol::webrtc::ReceiveStatistics stats;
    bool started = false;
    uint32_t ssrc = 0;
    int64_t offset_ms = 0;  // where this track's 0 ms is on the publication's timeline
  };
  void take(Track& track, bool video, const media::rtp::RtpPacketView& view, std::span<const uint8_t> packet,
            int64_t now);
  void poll_track(Track& track, int64_t now);
  void released(Track& track, bool video, std::vector<media::rtp::ReorderBuffer::Packet>& packets);
  void emit(Track& track, std::vector<media::rtp::DepacketizedFrame>& frames);

  PayloadTypes types_;
  OnFrame on_frame_;
  Track video_, audio_;
  bool have_base_ = false;
  int64_t base_ms_ = 0;  // the arrival of the publication's first packet
  media::rtp::H264Depacketizer h264_;
  media::rtp::OpusDepacketizer opus_;
  protocol::webrtc::NackGenerator nack_;
  std::vector<uint8_t> restored_;  // an RTX packet made the original again
  OpusToAac aac_;
  std::vector<media::rtp::ReorderBuffer::Packet> released_;
  std::vector<media::rtp::DepacketizedFrame> frames_out_;
  std::vector<media::FramePtr> aac_out_;
  uint64_t frames_ = 0;
  uint64_t foreign_ = 0;
  uint64_t rtx_ = 0;
  std::optional<uint64_t> last_keyframe_ms_;
  uint64_t now_ms_ = 0;  // of the packet being taken
};

}  // namespace sluice::server
