#include "server/webrtc/whip_receiver.hpp"

#include "media/frame.hpp"
#include "media/rtp/rtp_packet.hpp"
#include "media/rtp/rtx.hpp"

namespace sluice::server {

namespace rtp = media::rtp;
namespace pw = protocol::webrtc;

namespace {
// Video waits longer for a missing packet than audio: it is asked for again (three tries, 50 ms
// apart) and a lost piece of a picture costs every picture up to the next keyframe.
constexpr rtp::ReorderBuffer::Limits kVideoReorder{512, 150};
constexpr rtp::ReorderBuffer::Limits kAudioReorder{64, 80};
constexpr pw::NackGenerator::Limits kNack{500, 3, 5, 50};
}  // namespace

WhipReceiver::WhipReceiver(PayloadTypes types, OnFrame on_frame)
    : types_(types),
      on_frame_(std::move(on_frame)),
      video_(kVideoReorder, rtp::kVideoClockRate),
      audio_(kAudioReorder, rtp::kOpusClockRate),
      nack_(kNack) {}

WhipReceiver::~WhipReceiver() = default;

void WhipReceiver::on_rtp(std::span<const uint8_t> packet, uint64_t now_ms) {
  auto view = rtp::parse_rtp(packet);
  if (!view) {
    ++foreign_;
    return;
  }
  const auto now = static_cast<int64_t>(now_ms);
  now_ms_ = now_ms;
  if (types_.video_rtx != 0 && view->payload_type == types_.video_rtx) {
    // A retransmission (or a padding probe, which restores nothing): the original again.
    if (!video_.started || !rtp::restore_rtx(packet, *view, types_.video, video_.ssrc, restored_)) {
      ++foreign_;
      return;
    }
    auto original = rtp::parse_rtp(restored_);
    if (!original) return;
    ++rtx_;
    take(video_, true, *original, restored_, now);
  } else if (types_.video != 0 && view->payload_type == types_.video) {
    take(video_, true, *view, packet, now);
  } else if (types_.audio != 0 && view->payload_type == types_.audio) {
    take(audio_, false, *view, packet, now);
  } else {
    ++foreign_;  // FEC, or a payload type the answer did not take
    return;
  }
  // Packets come every few ms while media flows: gaps are given up on time without a timer.
  poll(now_ms);
}

void WhipReceiver::take(Track& track, bool video, const rtp::RtpPacketView& view, std::span<const uint8_t> packet,
                        int64_t now) {
  if (!track.started) {
    track.started = true;
    track.ssrc = view.ssrc;
    if (video) last_keyframe_ms_ = static_cast<uint64_t>(now);
    if (!have_base_) {
      have_base_ = true;
      base_ms_ = now;
    }
    track.offset_ms = now - base_ms_;
  }
  if (view.ssrc != track.ssrc) {
    ++foreign_;  // a second stream on one payload type (simulcast): not taken
    return;
  }
  if (video) nack_.on_packet(view.sequence, now);
  const rtp::ReorderBuffer::Stats& seen = track.reorder.stats();
  const uint64_t dropped = seen.duplicates + seen.late;
  released_.clear();
  track.reorder.push(view.sequence, Slice::copy_of(packet), now, released_);
  // The reports count what was of use: not a copy (browsers probe the bandwidth by sending
  // packets again over RTX) nor a packet that came after its frame was given up.
  if (seen.duplicates + seen.late == dropped) track.stats.on_packet(view.sequence, view.timestamp, now);
  released(track, video, released_);
}

void WhipReceiver::poll(uint64_t now_ms) {
  now_ms_ = now_ms;
  poll_track(video_, static_cast<int64_t>(now_ms));
  poll_track(audio_, static_cast<int64_t>(now_ms));
}

void WhipReceiver::poll_track(Track& track, int64_t now) {
  auto due = track.reorder.deadline();
  if (!due || *due > now) return;
  released_.clear();
  track.reorder.poll(now, released_);
  released(track, &track == &video_, released_);
}

void WhipReceiver::on_sender_report(uint32_t ssrc, uint64_t ntp_time, uint64_t now_ms) {
  for (Track* t : {&video_, &audio_}) {
    if (t->started && t->ssrc == ssrc) t->stats.on_sender_report(ntp_time, static_cast<int64_t>(now_ms));
  }
}

void WhipReceiver::nacks_due(uint64_t now_ms, std::vector<uint16_t>& out) {
  auto due = nack_.deadline();
  if (due && *due <= static_cast<int64_t>(now_ms)) nack_.poll(static_cast<int64_t>(now_ms), out);
}

void WhipReceiver::write_receiver_report(uint32_t our_ssrc, uint64_t now_ms, std::vector<uint8_t>& out) {
  pw::ReceiverReport rr;
  rr.ssrc = our_ssrc;
  for (Track* t : {&video_, &audio_}) {
    if (t->started) rr.blocks.push_back(t->stats.report(t->ssrc, static_cast<int64_t>(now_ms)));
  }
  if (!rr.blocks.empty()) pw::write_receiver_report(rr, out);
}

std::vector<uint32_t> WhipReceiver::media_ssrcs() const {
  std::vector<uint32_t> out;
  for (const Track* t : {&video_, &audio_}) {
    if (t->started) out.push_back(t->ssrc);
  }
  return out;
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
      if (f.keyframe) last_keyframe_ms_ = now_ms_;
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
