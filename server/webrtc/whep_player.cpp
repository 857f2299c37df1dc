#include "server/webrtc/whep_player.hpp"

#include <algorithm>

#include "media/codec/flv_audio.hpp"
#include "media/codec/flv_video.hpp"
#include "media/codec/opus.hpp"
#include "media/rtp/opus_rtp.hpp"
#include "media/rtp/rtp_packet.hpp"
#include "protocol/webrtc/rtcp.hpp"
#include "server/io/write_batch.hpp"

namespace sluice::server {

namespace {
constexpr size_t kRtpHeader = 12;
constexpr size_t kHistoryPackets = 512;      // ~1 s of a 5 Mb/s stream: a few round trips
constexpr size_t kAudioHistoryPackets = 64;  // 1.3 s of 20 ms Opus packets

bool is_h264(const media::Frame& f) {
  if (f.payload.size() < 1) return false;
  const uint8_t b = f.payload[0];
  if ((b & 0x80) == 0) return (b & 0x0F) == 7;  // legacy AVC
  return f.payload.size() >= 5 && f.payload[1] == 'a' && f.payload[2] == 'v' && f.payload[3] == 'c' &&
         f.payload[4] == '1';  // Enhanced RTMP 'avc1'
}
}  // namespace

std::optional<std::string_view> whep_unplayable_video(const media::StreamHub& hub) {
  for (const media::FramePtr& f : hub.sequence_headers()) {
    if (f->kind != media::FrameKind::Video || is_h264(*f)) continue;
    auto header = media::parse_video_tag(f->payload.span());
    return header ? media::video_codec_name(header->codec()) : std::string_view("not H.264");
  }
  return std::nullopt;
}

WhepPlayer::WhepPlayer(PlayerOutput& output, StreamRegistry& registry, std::string key, media::StreamHub& hub,
                       const config::PlayerQueueConfig& queue, Track video, Track audio, Send send,
                       std::function<uint64_t()> now_ms, std::shared_ptr<SharedMedia> shared)
    : LiveSubscriber(output, registry, std::move(key), hub, queue, " proto=webrtc"),
      video_(video),
      audio_(audio),
      send_(std::move(send)),
      now_ms_(std::move(now_ms)),
      video_history_(kHistoryPackets, video.sequence),
      audio_history_(kAudioHistoryPackets, audio.sequence),
      shared_(std::move(shared)),
      created_ms_(now_ms_()) {
  packet_.reserve(1500);
  subscribe();
}

void WhepPlayer::on_publish_end() {
  // A WHEP player stays for a publisher that comes back (a takeover or a reconnect): its
  // session ends with the client's DELETE or its silence, as a browser expects.
  output_.request_flush();
}

bool WhepPlayer::wants(const media::Frame& f) const {
  if (ended_) return false;
  if (f.kind == media::FrameKind::Video) return video_.payload_type != 0;
  return f.kind == media::FrameKind::Audio && audio_.payload_type != 0;
}

bool WhepPlayer::fill(size_t max_bytes) {
  thread_local WriteBatch unused;  // frames go to send_, not to a batch
  return fill_frames(unused, max_bytes);
}

void WhepPlayer::append(const media::Frame& f, WriteBatch&) {
  if (f.kind == media::FrameKind::Video) return send_video(f);
  if (media::read_opus_body(f.payload.span())) return send_audio(f);
  auto header = media::parse_audio_tag(f.payload.span());
  if (!header || header->codec() != media::AudioCodec::Aac) {
    ++skipped_;
    return;
  }
  for (const auto& o : shared_->opus.opus_of(f)) send_audio(*o);
}

void WhepPlayer::send_video(const media::Frame& f) {
  if (!is_h264(f)) {
    ++skipped_;
    return;
  }
  const media::rtp::PacketizedFrame* packets = shared_->video.packets_of(f);
  if (packets == nullptr) return;  // a sequence header, or nothing
  started_ = true;
  const uint64_t now = now_ms_();
  if (!first_picture_ms_) {
    first_picture_ms_ = now;
  } else if (now - *first_picture_ms_ <= kStartWindowMs) {
    start_gap_ms_ = std::max(start_gap_ms_, now - last_picture_ms_);
  }
  last_picture_ms_ = now;
  const size_t count = packets->payloads.size();
  for (size_t i = 0; i < count; ++i) {
    send_packet(video_, video_history_, i + 1 == count, packets->timestamp, packets->payloads[i]);
  }
}

void WhepPlayer::send_audio(const media::Frame& opus) {
  auto payload = media::rtp::packetize_opus(opus.payload, opus.timestamp);
  if (!payload) return;  // the OpusHead: nothing for RTP
  send_packet(audio_, audio_history_, true, payload->timestamp, payload->payload);
}

void WhepPlayer::send_packet(Track& track, media::rtp::RtpHistory& history, bool marker, uint32_t rtp_time,
                             const Slice& payload) {
  const uint16_t sequence = history.add(rtp_time, marker, payload.share());
  track.sequence = static_cast<uint16_t>(sequence + 1);
  ++track.packets;
  track.octets += payload.size();
  track.last_rtp_time = rtp_time;
  track.last_sent_ms = now_ms_();
  write_packet(track, sequence, marker, rtp_time, payload.span());
}

void WhepPlayer::write_packet(const Track& track, uint16_t sequence, bool marker, uint32_t rtp_time,
                              std::span<const uint8_t> payload) {
  packet_.resize(kRtpHeader + payload.size());
  media::rtp::write_fixed_header(packet_.data(), marker, track.payload_type, sequence, rtp_time, track.ssrc);
  std::copy(payload.begin(), payload.end(), packet_.begin() + kRtpHeader);
  send_(packet_);
}

std::optional<uint64_t> WhepPlayer::start_ms() const {
  if (!first_picture_ms_) return std::nullopt;
  return *first_picture_ms_ - created_ms_;
}

void WhepPlayer::resend(uint32_t ssrc, std::span<const uint16_t> sequences) {
  const bool video = ssrc == video_.ssrc;
  if (!video && ssrc != audio_.ssrc) return;
  const media::rtp::RtpHistory& history = video ? video_history_ : audio_history_;
  for (uint16_t seq : sequences) {
    const media::rtp::HistoryPacket* p = history.find(seq);
    if (p == nullptr) continue;  // too old: the player's jitter buffer copes, or asks for a keyframe
    write_packet(video ? video_ : audio_, p->sequence, p->marker, p->timestamp, p->payload.span());
    ++retransmitted_;
  }
}

void WhepPlayer::sender_reports(uint64_t unix_us, uint64_t now_ms, std::vector<uint8_t>& out) const {
  const uint64_t ntp = protocol::webrtc::ntp_from_unix_us(unix_us);
  for (const auto* t : {&video_, &audio_}) {
    if (t->packets == 0) continue;
    const uint32_t clock = t == &video_ ? 90 : 48;  // kHz
    protocol::webrtc::SenderReport sr;
    sr.ssrc = t->ssrc;
    sr.ntp_time = ntp;
    // The RTP time now, on the clock of the last packet's: media time runs with the wall clock.
    sr.rtp_time = t->last_rtp_time + static_cast<uint32_t>((now_ms - t->last_sent_ms) * clock);
    sr.packet_count = static_cast<uint32_t>(t->packets);
    sr.octet_count = static_cast<uint32_t>(t->octets);
    protocol::webrtc::write_sender_report(sr, out);
  }
  if (!out.empty()) protocol::webrtc::write_sdes_cname(video_.packets ? video_.ssrc : audio_.ssrc, "sluice", out);
}

}  // namespace sluice::server
