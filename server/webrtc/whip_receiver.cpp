#include "server/webrtc/whip_receiver.hpp"

#include "media/frame.hpp"
#include "media/rtp/rtp_packet.hpp"

namespace sluice::server {

namespace rtp = media::rtp;

WhipReceiver::WhipReceiver(uint8_t video_payload_type, uint8_t audio_payload_type, OnFrame on_frame)
    : video_pt_(video_payload_type), audio_pt_(audio_payload_type), on_frame_(std::move(on_frame)) {}

WhipReceiver::~WhipReceiver() = default;

void WhipReceiver::on_rtp(std::span<const uint8_t> packet, uint64_t now_ms) {
  auto view = rtp::parse_rtp(packet);
  if (!view) {
    ++foreign_;
    return;
  }
  const bool video = video_pt_ != 0 && view->payload_type == video_pt_;
  const bool audio = audio_pt_ != 0 && view->payload_type == audio_pt_;
  if (!video && !audio) {
    ++foreign_;  // rtx, FEC, padding probes
    return;
  }
  Track& track = video ? video_ : audio_;
  const auto now = static_cast<int64_t>(now_ms);
  if (!track.started) {
    track.started = true;
    track.ssrc = view->ssrc;
    if (!have_base_) {
      have_base_ = true;
      base_ms_ = now;
    }
    track.offset_ms = now - base_ms_;
  }
  if (view->ssrc != track.ssrc) {
    ++foreign_;  // a second stream on one payload type (simulcast): not taken
    return;
  }
  released_.clear();
  track.reorder.push(view->sequence, Slice::copy_of(packet), now, released_);
  released(track, video, released_);
}

void WhipReceiver::poll(uint64_t now_ms) {
  for (Track* t : {&video_, &audio_}) {
    auto due = t->reorder.deadline();
    if (!due || *due > static_cast<int64_t>(now_ms)) continue;
    released_.clear();
    t->reorder.poll(static_cast<int64_t>(now_ms), released_);
    released(*t, t == &video_, released_);
  }
}

void WhipReceiver::released(Track& track, bool video, std::vector<rtp::ReorderBuffer::Packet>& packets) {
  for (const auto& p : packets) {
    auto view = rtp::parse_rtp(p.bytes.span());
    if (!view) continue;
    frames_out_.clear();
    if (video) {
      h264_.push(*view, frames_out_);
    } else {
      opus_.push(*view, frames_out_);
    }
    emit(track, frames_out_);
  }
}

void WhipReceiver::emit(Track& track, std::vector<rtp::DepacketizedFrame>& frames) {
  for (auto& f : frames) {
    const auto timestamp = static_cast<uint32_t>(static_cast<int64_t>(f.timestamp_ms) + track.offset_ms);
    if (&track == &video_) {
      ++frames_;
      on_frame_(9, timestamp, Slice::adopt(std::move(f.body)));
      continue;
    }
    // Opus to AAC: the hub's other outputs take AAC.
    media::FramePtr opus = media::make_frame(8, timestamp, Slice::adopt(std::move(f.body)));
    aac_out_.clear();
    aac_.push(*opus, aac_out_);
    for (const auto& a : aac_out_) on_frame_(8, a->timestamp, a->payload.share());
  }
}

}  // namespace sluice::server
