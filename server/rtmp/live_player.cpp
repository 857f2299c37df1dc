#include "server/rtmp/live_player.hpp"

#include "protocol/session.hpp"
#include "server/io/write_batch.hpp"
#include "server/live/wire_body.hpp"
#include "server/rtmp/connection.hpp"

namespace sluice::server {

LivePlayer::LivePlayer(RtmpConnection& conn, uint32_t stream_id, std::string key, std::string name,
                       media::StreamHub& hub)
    : LiveSubscriber(conn, conn.registry(), std::move(key), hub, conn.config().rtmp.player_queue, ""),
      conn_(conn),
      stream_id_(stream_id),
      name_(std::move(name)) {
  subscribe();
}

bool LivePlayer::wants(const media::Frame& f) const {
  return !((f.kind == media::FrameKind::Audio && !audio_) || (f.kind == media::FrameKind::Video && !video_));
}

void LivePlayer::on_publish_start() {
  if (!notified_unpublish_) return;
  notified_unpublish_ = false;
  queue_notice(Notice::PublishStart);
}

void LivePlayer::on_publish_end() {
  notified_unpublish_ = true;
  queue_notice(Notice::PublishEnd);
}

// Called by the fill loop once the frames queued before the notice are in the batch: the session's
// control output it produces is drained right behind them, in the order it was chunked.
void LivePlayer::append_notice(Notice n, WriteBatch& batch) {
  auto& s = conn_.session();
  if (n == Notice::PublishEnd) {
    s.send_status(stream_id_, protocol::Status::PlayUnpublishNotify, name_ + " is now unpublished.",
                  {{"details", protocol::amf::Value::string(name_)}});
    s.send_user_control({protocol::UserControlEvent::StreamEof, stream_id_, 0});
  } else {
    // Every frame of the old publication is out: the next one starts the new timeline.
    rebase_next_ = sent_any_;
    s.send_user_control({protocol::UserControlEvent::StreamBegin, stream_id_, 0});
    s.send_status(stream_id_, protocol::Status::PlayPublishNotify, name_ + " is now published.",
                  {{"details", protocol::amf::Value::string(name_)}});
  }
  conn_.append_control_output(batch);
}

void LivePlayer::set_paused(bool paused, uint32_t) {
  if (paused == paused_) return;
  paused_ = paused;
  auto& s = conn_.session();
  if (paused) {
    // A paused live player leaves the hub; unpausing rejoins at the latest keyframe.
    unsubscribe();
    clear_queue();
    s.notify_pause(stream_id_, "Paused live stream " + name_ + ".");
  } else {
    s.notify_unpause(stream_id_, "Unpaused live stream " + name_ + ".");
    subscribe();
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

void LivePlayer::append(const media::Frame& f, WriteBatch& batch) {
  append_frame_message(conn_.session().chunk_writer(), f, output_timestamp(f), stream_id_, batch);
}

}  // namespace sluice::server
