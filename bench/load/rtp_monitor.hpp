// RtpMonitor: what a WHEP load player measures on the SRTP it receives without decrypting it. The
// RTP header stays clear under SRTP (RFC 3711: only the payload is encrypted), so it reads the
// sequence number, timestamp, marker and SSRC of each packet:
//
//  - per SSRC: packets, and packets lost as RFC 3550 A.3 counts them (expected from the extended
//    highest sequence number, minus received; the bench sends no NACK, so nothing is repaired);
//  - video frames: a packet with the marker bit ends a frame, counted when its timestamp differs
//    from the previous frame's. A frame whose packets did not all arrive (a sequence gap since the
//    previous frame's end) is incomplete: a decoder without retransmission would lose it;
//  - time to first frame: from the moment the offer was sent to the end of the first frame;
//  - freezes: after the first frame, no new frame for more than the threshold (500 ms by
//    default); counted once per episode (ClientStats::stalls), the episode ends at the next
//    frame. The longest gap between two frames is kept too;
//  - frame timestamps that go back (serial arithmetic, RTP timestamps wrap) count as
//    non-monotonic; the video clock's progress against the wall clock is kept, from 2 s after the
//    first frame (a new player first gets the server's GOP cache in a burst) to the last frame.
//
// The payload (encrypted) is never looked at, so whether the first frame is a keyframe is unknown.
#pragma once

#include <cstdint>
#include <span>

#include "bench/load/client.hpp"

namespace sluice::bench {

class RtpMonitor {
 public:
  explicit RtpMonitor(uint32_t freeze_ms) : freeze_ns_(int64_t{freeze_ms} * 1'000'000) {}

  // From the answer: which payload type (and SSRC, 0 when not announced) is video.
  void set_video(uint8_t payload_type, uint32_t ssrc) {
    video_pt_ = payload_type;
    video_ssrc_ = ssrc;
  }
  void on_offer_sent(int64_t now_ns) { offer_sent_ns_ = now_ns; }
  // One SRTP datagram (its RTP header is clear).
  void on_rtp(std::span<const uint8_t> datagram, int64_t now_ns, ClientStats& s);
  // A freeze while nothing arrives.
  void check(int64_t now_ns, ClientStats& s);

  struct Figures {
    uint64_t video_packets = 0, video_lost = 0;
    uint64_t audio_packets = 0, audio_lost = 0;
    uint64_t frames = 0;
    uint64_t frames_incomplete = 0;
    int64_t max_frame_gap_ns = 0;
    double video_clock_ratio = 0;  // RTP time advanced / wall time, over at least 2 s (0: too short)
  };
  Figures figures() const;

 private:
  struct Sequence {
    bool started = false;
    uint32_t cycles = 0;  // wraps of the 16-bit sequence number, shifted left 16
    uint16_t max = 0;
    uint32_t base = 0;  // extended sequence number of the first packet
    uint64_t received = 0;
    void add(uint16_t seq);
    uint64_t expected() const { return started ? (cycles | max) - base + 1 : 0; }
    uint64_t lost() const { return expected() > received ? expected() - received : 0; }
  };
  void on_frame_end(uint32_t timestamp, int64_t now_ns, ClientStats& s);

  int64_t freeze_ns_;
  int64_t offer_sent_ns_ = 0;
  uint8_t video_pt_ = 0;
  uint32_t video_ssrc_ = 0;
  Sequence video_, audio_;
  uint64_t frames_ = 0;
  uint64_t frames_incomplete_ = 0;
  uint64_t lost_at_frame_start_ = 0;  // video_.lost() when the current frame began
  bool have_frame_ = false;
  uint32_t last_frame_ts_ = 0;
  int64_t last_frame_ns_ = 0;
  int64_t max_frame_gap_ns_ = 0;
  bool in_freeze_ = false;
  // Video clock: RTP time advanced (unwrapped) since the reference frame, 2 s after the first.
  int64_t first_frame_ns_ = 0;
  int64_t clock_ref_ns_ = 0;  // 0: not yet
  int64_t media_ticks_ = 0;
};

}  // namespace sluice::bench
