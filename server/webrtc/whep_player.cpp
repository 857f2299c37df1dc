#include "server/webrtc/whep_player.hpp"

#include "media/codec/flv_audio.hpp"
#include "media/codec/opus.hpp"
#include "media/rtp/opus_rtp.hpp"
#include "media/rtp/rtp_packet.hpp"
#include "server/io/write_batch.hpp"

namespace sluice::server {

namespace {
constexpr size_t kRtpHeader = 12;

bool is_h264(const media::Frame& f) {
  if (f.payload.size() < 1) return false;
  const uint8_t b = f.payload[0];
  if ((b & 0x80) == 0) return (b & 0x0F) == 7;  // legacy AVC
  return f.payload.size() >= 5 && f.payload[1] == 'a' && f.payload[2] == 'v' && f.payload[3] == 'c' &&
         f.payload[4] == '1';  // Enhanced RTMP 'avc1'
}
}  // namespace

WhepPlayer::WhepPlayer(PlayerOutput& output, StreamRegistry& registry, std::string key, media::StreamHub& hub,
                       const config::PlayerQueueConfig& queue, Track video, Track audio, Send send,
                       std::function<uint64_t()> now_ms)
    : LiveSubscriber(output, registry, std::move(key), hub, queue, " proto=webrtc"),
      video_(video),
      audio_(audio),
      send_(std::move(send)),
      now_ms_(std::move(now_ms)) {
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
  if (!bridge_) bridge_ = std::make_unique<AacToOpus>();
  opus_.clear();
  bridge_->push(f, opus_);
  for (const auto& o : opus_) send_audio(*o);
}

void WhepPlayer::send_video(const media::Frame& f) {
  if (!is_h264(f)) {
    ++skipped_;
    return;
  }
  if (!h264_.packetize(f.payload.span(), f.timestamp, packets_)) return;  // a sequence header, or nothing
  started_ = true;
  for (size_t i = 0; i < packets_.payloads.size(); ++i) {
    send_packet(video_, i + 1 == packets_.payloads.size(), packets_.timestamp, packets_.payloads[i].span());
  }
}

void WhepPlayer::send_audio(const media::Frame& opus) {
  auto payload = media::rtp::packetize_opus(opus.payload, opus.timestamp);
  if (!payload) return;  // the OpusHead: nothing for RTP
  send_packet(audio_, true, payload->timestamp, payload->payload.span());
}

void WhepPlayer::send_packet(Track& track, bool marker, uint32_t rtp_time, std::span<const uint8_t> payload) {
  packet_.resize(kRtpHeader + payload.size());
  media::rtp::write_fixed_header(packet_.data(), marker, track.payload_type, track.sequence++, rtp_time, track.ssrc);
  std::copy(payload.begin(), payload.end(), packet_.begin() + kRtpHeader);
  ++track.packets;
  track.octets += payload.size();
  track.last_rtp_time = rtp_time;
  track.last_sent_ms = now_ms_();
  send_(packet_);
}

}  // namespace sluice::server
