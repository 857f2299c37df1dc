// WhepPlayer: a WHEP session's player of a live stream (docs/webrtc.md, "Playing"). A
// LiveSubscriber (server/live/live_subscriber.hpp: the GOP-cache start on a keyframe, the bounded
// queue and the slow-player rules of every live player), whose frames leave as RTP:
//   - H.264 packetised once per frame for all the stream's players on this loop
//     (server/webrtc/shared_h264.hpp: single NAL units, STAP-A with the SPS and PPS before each
//     keyframe, FU-A), 90 kHz;
//   - Opus as it is (a WHIP publisher's), or the stream's AAC made Opus by the stream's one bridge
//     on this loop (server/webrtc/shared_opus.hpp), 48 kHz.
// Each packet gets this player's 12-byte header (its SSRCs, its own sequence numbers) and goes to
// `send`, which protects it with SRTP and puts it on the UDP port. Frames of other codecs (HEVC,
// MP3) are counted and skipped.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "media/rtp/rtp_history.hpp"
#include "server/access/access_ticket.hpp"
#include "server/live/live_subscriber.hpp"
#include "server/webrtc/shared_media.hpp"

namespace sluice::server {

// WebRTC players get H.264 video (docs/webrtc.md, "What is and is not supported"). The name of the
// stream's video codec ("HEVC", "AV1", ...) when its sequence header says it is another; nothing
// when it is H.264 or not known yet.
std::optional<std::string_view> whep_unplayable_video(const media::StreamHub& hub);

class WhepPlayer final : public LiveSubscriber {
 public:
  struct Track {
    uint8_t payload_type = 0;      // 0: the answer took no such track
    uint8_t rtx_payload_type = 0;  // WHIP: the publisher's retransmissions (0: none)
    uint32_t ssrc = 0;
    uint16_t sequence = 0;  // the next one (starts random)
    uint64_t packets = 0;
    uint64_t octets = 0;
    uint32_t last_rtp_time = 0;  // of the last packet sent, for sender reports
    uint64_t last_sent_ms = 0;
  };
  // Takes one RTP packet (header and payload) to protect and send.
  using Send = std::function<void(std::vector<uint8_t>& packet)>;

  WhepPlayer(PlayerOutput& output, StreamRegistry& registry, std::string key, media::StreamHub& hub,
             const config::PlayerQueueConfig& queue, Track video, Track audio, Send send,
             std::function<uint64_t()> now_ms, std::shared_ptr<SharedMedia> shared);

  void on_publish_end() override;
  // A NACK for this player's SSRC `ssrc`: the packets still kept go again (same numbers).
  void resend(uint32_t ssrc, std::span<const uint16_t> sequences);
  // Sender reports of both tracks (and an SDES CNAME): the NTP time of `unix_us` against each
  // track's RTP clock, which is what lets a browser play audio and video in sync.
  void sender_reports(uint64_t unix_us, uint64_t now_ms, std::vector<uint8_t>& out) const;
  uint64_t retransmitted() const { return retransmitted_; }
  // Sends queued frames, at most about max_bytes of them; true when frames remain.
  bool fill(size_t max_bytes);
  bool ended() const { return ended_ && queue_empty(); }

  const Track& video() const { return video_; }
  const Track& audio() const { return audio_; }
  uint64_t skipped_frames() const { return skipped_; }
  // The start as the loop saw it: ms from the play to the first picture sent, and the longest
  // wait between two pictures sent in the kStartWindowMs after it (a join's backlog goes in one
  // go, then a picture every frame interval; more is a loop that did not run, or a stream that
  // paused). What a freeze at a browser's start is compared with.
  static constexpr uint64_t kStartWindowMs = 3000;
  std::optional<uint64_t> start_ms() const;
  uint64_t start_gap_ms() const { return start_gap_ms_; }

  AccessTicket ticket;  // the play's seat and its done hook

 private:
  bool wants(const media::Frame& f) const override;
  bool started() const override { return started_; }
  void append(const media::Frame& f, WriteBatch& batch) override;
  void send_video(const media::Frame& f);
  void send_audio(const media::Frame& opus);
  void send_packet(Track& track, media::rtp::RtpHistory& history, bool marker, uint32_t rtp_time, const Slice& payload);
  void write_packet(const Track& track, uint16_t sequence, bool marker, uint32_t rtp_time,
                    std::span<const uint8_t> payload);

  Track video_, audio_;
  Send send_;
  std::function<uint64_t()> now_ms_;
  // What went out, for NACKs: slices of the frames' packets, no copy (about a second of video).
  media::rtp::RtpHistory video_history_, audio_history_;
  uint64_t retransmitted_ = 0;
  std::shared_ptr<SharedMedia> shared_;  // the stream's Opus and RTP payloads, shared by its players on this loop
  std::vector<uint8_t> packet_;
  uint64_t skipped_ = 0;
  uint64_t created_ms_;
  std::optional<uint64_t> first_picture_ms_;
  uint64_t last_picture_ms_ = 0;
  uint64_t start_gap_ms_ = 0;
  bool started_ = false;
  bool ended_ = false;
};

}  // namespace sluice::server
