#include "server/http/flv_player.hpp"

#include <cstdio>

#include "media/flv.hpp"
#include "server/http/connection.hpp"
#include "server/live/frame_queue.hpp"
#include "server/io/logging.hpp"
#include "server/server.hpp"
#include "server/io/write_batch.hpp"

namespace sluice::server {

namespace {
// Frames popped from the queue per fill: bounds one reader's share of one batch.
constexpr size_t kMaxFramesPerFill = 256;
// "ffffff\r\n" is the longest chunk-size line a tag needs (a tag is at most 11 + 0xFFFFFF + 4 bytes).
constexpr size_t kMaxChunkLine = 10;

media::SubscriberQueue::Limits queue_limits(const config::PlayerQueueConfig& q) {
  media::SubscriberQueue::Limits l;
  l.soft_bytes = q.soft_bytes;
  l.hard_bytes = q.hard_bytes;
  l.soft_ms = static_cast<uint32_t>(q.soft_delay.count());
  l.hard_ms = static_cast<uint32_t>(q.hard_delay.count());
  return l;
}

size_t chunk_line(uint8_t* out, size_t size) {
  return static_cast<size_t>(std::snprintf(reinterpret_cast<char*>(out), kMaxChunkLine + 1, "%zx\r\n", size));
}
}  // namespace

HttpFlvPlayer::HttpFlvPlayer(HttpConnection& conn, std::string key, media::StreamHub& hub, bool chunked,
                             const config::PlayerQueueConfig& queue)
    : conn_(conn), key_(std::move(key)), hub_(&hub), queue_(queue_limits(queue)), chunked_(chunked) {
  subscribed_ = true;
  hub_->add_subscriber(this);
}

HttpFlvPlayer::~HttpFlvPlayer() {
  unsubscribe();
  if (queue_.dropped_frames() > 0)
    SLUICE_LOG_INFO("conn={} event=player_end proto=http-flv stream={} dropped_frames={}", conn_.id(), key_,
                    queue_.dropped_frames());
  conn_.server().registry().remove_if_unused(key_);
}

void HttpFlvPlayer::unsubscribe() {
  if (!subscribed_) return;
  subscribed_ = false;
  hub_->remove_subscriber(this);
  hub_ = nullptr;
}

void HttpFlvPlayer::on_frame(const media::FramePtr& frame) {
  if (ended_ || conn_.closing() || !conn_.pending_close_reason.empty()) return;
  // FLV carries audio (8), video (9) and AMF0 script data (18) tags; nothing else is a valid tag.
  if (frame->rtmp_type != 8 && frame->rtmp_type != 9 && frame->rtmp_type != 18) return;
  if (frame->payload.size() > media::kFlvMaxDataSize) return;
  queue_live_frame(conn_, queue_, frame, key_, header_sent_, " proto=http-flv");
}

void HttpFlvPlayer::on_publish_end() {
  // The hub allows a subscriber to leave from inside its callbacks. Leaving now means a new
  // publisher of the same name never reaches this response, which belongs to the old one.
  ended_ = true;
  unsubscribe();
  conn_.request_flush();
}

void HttpFlvPlayer::end() {
  ended_ = true;
  unsubscribe();
  conn_.request_flush();
}

void HttpFlvPlayer::append_tag(const media::Frame& f, WriteBatch& batch) {
  uint32_t size = static_cast<uint32_t>(f.payload.size());
  uint8_t* h = batch.reserve_header(kMaxChunkLine + media::kFlvTagHeaderSize);
  size_t n = chunked_ ? chunk_line(h, media::kFlvTagHeaderSize + size + media::kFlvPreviousTagSizeSize) : 0;
  media::write_tag_header(f.rtmp_type, size, f.timestamp, h + n);
  batch.commit_header(n + media::kFlvTagHeaderSize);
  batch.add_slice(f.payload.share());
  uint8_t tail[6];
  media::write_previous_tag_size(size, tail);
  tail[4] = '\r';
  tail[5] = '\n';
  batch.add_bytes({tail, chunked_ ? size_t{6} : size_t{4}});
  ++tags_;
}

HttpFlvPlayer::Fill HttpFlvPlayer::fill(WriteBatch& batch, size_t max_bytes) {
  if (!header_sent_ && (!queue_.empty() || ended_)) {
    header_sent_ = true;
    // The flags tell players (flv.js, mpegts.js) which tracks to wait for.
    bool audio = true, video = true;
    if (hub_ && (hub_->info().has_audio() || hub_->info().has_video())) {
      audio = hub_->info().has_audio();
      video = hub_->info().has_video();
    }
    std::vector<uint8_t> header;
    media::write_flv_header(audio, video, header);
    if (chunked_) {
      uint8_t line[kMaxChunkLine + 1];
      batch.add_bytes({line, chunk_line(line, header.size())});
      header.push_back('\r');
      header.push_back('\n');
    }
    batch.add_bytes(header);
  }
  if (!queue_.empty()) {
    scratch_.clear();
    queue_.pop_batch(scratch_, kMaxFramesPerFill, max_bytes);
    for (const auto& f : scratch_) append_tag(*f, batch);
    scratch_.clear();
    if (!queue_.empty()) return Fill::More;
  }
  return ended_ ? Fill::Ended : Fill::Idle;
}

}  // namespace sluice::server
