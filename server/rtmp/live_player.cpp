#include "server/rtmp/live_player.hpp"

#include "protocol/session.hpp"
#include "server/rtmp/connection.hpp"
#include "server/live/frame_queue.hpp"
#include "server/io/logging.hpp"
#include "server/server.hpp"
#include "server/io/write_batch.hpp"

namespace sluice::server {

namespace {
// Frames popped from the queue per fill: bounds one player's share of one batch.
constexpr size_t kMaxFramesPerFill = 256;

media::SubscriberQueue::Limits queue_limits(const config::PlayerQueueConfig& q) {
  media::SubscriberQueue::Limits l;
  l.soft_bytes = q.soft_bytes;
  l.hard_bytes = q.hard_bytes;
  l.soft_ms = static_cast<uint32_t>(q.soft_delay.count());
  l.hard_ms = static_cast<uint32_t>(q.hard_delay.count());
  return l;
}

// Pre-chunked bodies are cached per (chunk stream, chunk size).
uint32_t wire_key(uint32_t csid, uint32_t chunk_size) { return (csid << 17) | (chunk_size & 0x1FFFF); }
}  // namespace

void prepare_wire_body(const media::Frame& f, uint32_t chunk_size) {
  uint32_t csid = protocol::Session::media_csid(f.rtmp_type);
  uint32_t key = wire_key(csid, chunk_size);
  if (f.wire_cache_key == key && (!f.wire_cache.empty() || f.payload.empty())) return;
  // First player to send this frame chunks it, once, for everyone.
  protocol::ChunkedBody body = protocol::chunk_body(f.payload.span(), csid, chunk_size);
  f.wire_cache = std::move(body.bytes);
  f.wire_cache_key = key;
}

LivePlayer::LivePlayer(RtmpConnection& conn, uint32_t stream_id, std::string key, std::string name, media::StreamHub& hub)
    : conn_(conn),
      stream_id_(stream_id),
      key_(std::move(key)),
      name_(std::move(name)),
      hub_(hub),
      queue_(queue_limits(conn.server().config().rtmp.player_queue)) {
  subscribed_ = true;
  hub_.add_subscriber(this);
}

LivePlayer::~LivePlayer() {
  if (subscribed_) hub_.remove_subscriber(this);
  if (queue_.dropped_frames() > 0)
    SLUICE_LOG_INFO("conn={} event=player_end stream={} dropped_frames={}", conn_.id(), key_, queue_.dropped_frames());
  conn_.server().registry().remove_if_unused(key_);
}

void LivePlayer::on_frame(const media::FramePtr& frame) {
  if (conn_.closing() || !conn_.pending_close_reason.empty()) return;
  if ((frame->kind == media::FrameKind::Audio && !audio_) || (frame->kind == media::FrameKind::Video && !video_))
    return;
  queue_live_frame(conn_, queue_, frame, key_, sent_any_, "");
}

void LivePlayer::on_publish_start() {
  if (!notified_unpublish_) return;
  notified_unpublish_ = false;
  rebase_next_ = sent_any_;
  auto& s = conn_.session();
  s.send_user_control({protocol::UserControlEvent::StreamBegin, stream_id_, 0});
  s.send_status(stream_id_, protocol::Status::PlayPublishNotify, name_ + " is now published.",
                {{"details", protocol::amf::Value::string(name_)}});
  conn_.request_flush();
}

void LivePlayer::on_publish_end() {
  notified_unpublish_ = true;
  auto& s = conn_.session();
  s.send_status(stream_id_, protocol::Status::PlayUnpublishNotify, name_ + " is now unpublished.",
                {{"details", protocol::amf::Value::string(name_)}});
  s.send_user_control({protocol::UserControlEvent::StreamEof, stream_id_, 0});
  conn_.request_flush();
}

void LivePlayer::set_paused(bool paused, uint32_t) {
  if (paused == paused_) return;
  paused_ = paused;
  auto& s = conn_.session();
  if (paused) {
    // A paused live player leaves the hub; unpausing rejoins at the latest keyframe.
    hub_.remove_subscriber(this);
    subscribed_ = false;
    queue_.clear();
    s.notify_pause(stream_id_, "Paused live stream " + name_ + ".");
  } else {
    s.notify_unpause(stream_id_, "Unpaused live stream " + name_ + ".");
    subscribed_ = true;
    hub_.add_subscriber(this);
  }
  conn_.request_flush();
}

void LivePlayer::set_receive(bool video, bool enabled) {
  (video ? video_ : audio_) = enabled;
  if (!enabled) return;
  conn_.session().notify_seek(stream_id_, name_);
  conn_.request_flush();
}

uint32_t LivePlayer::output_timestamp(const media::Frame& f) {
  if (rebase_next_) {
    // The new publication continues just after what this player last saw.
    rebase_next_ = false;
    offset_ = last_ts_ + 1 - f.timestamp;
  }
  uint32_t ts = f.timestamp + offset_;
  last_ts_ = ts;
  sent_any_ = true;
  return ts;
}

void LivePlayer::append_frame(const media::Frame& f, WriteBatch& batch, protocol::ChunkWriter& writer) {
  uint32_t csid = protocol::Session::media_csid(f.rtmp_type);
  uint32_t chunk_size = writer.chunk_size();
  uint32_t ts = output_timestamp(f);
  prepare_wire_body(f, chunk_size);
  protocol::ChunkedBody body{f.wire_cache.share(), static_cast<uint32_t>(f.payload.size()), csid, chunk_size};
  uint8_t* header = batch.reserve_header(protocol::kMaxChunkHeaderSize);
  size_t header_len = 0;
  if (writer.write_first_header(csid, f.rtmp_type, ts, stream_id_, body, header, header_len)) {
    batch.commit_header(header_len);
    batch.add_slice(std::move(body.bytes));
    return;
  }
  // Extended timestamps need per-player continuation headers: encode this one in full.
  batch.commit_header(0);
  auto& arena = batch.arena();
  size_t old = arena.size();
  writer.write(csid, f.rtmp_type, ts, stream_id_, f.payload.span(), arena);
  batch.after_arena_append(old);
}

bool LivePlayer::fill(WriteBatch& batch, protocol::ChunkWriter& writer, size_t max_bytes) {
  if (queue_.empty()) return false;
  scratch_.clear();
  queue_.pop_batch(scratch_, kMaxFramesPerFill, max_bytes);
  for (const auto& f : scratch_) append_frame(*f, batch, writer);
  scratch_.clear();
  return !queue_.empty();
}

}  // namespace sluice::server
