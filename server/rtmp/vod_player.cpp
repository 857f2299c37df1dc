#include "server/rtmp/vod_player.hpp"

#include "media/vod/tag_body.hpp"
#include "protocol/session.hpp"
#include "server/io/cached_read.hpp"
#include "server/io/logging.hpp"
#include "server/rtmp/connection.hpp"
#include "server/vod/files.hpp"

namespace sluice::server {

namespace {

using Pace = media::vod::PaceDecision::Kind;

struct ReadOp {
  uv_fs_t req{};
  std::vector<uint8_t> buf;
  std::shared_ptr<bool> alive;
  VodFilePtr file;  // keeps the descriptor open until the read completes
  uint64_t generation = 0;
  media::vod::ReadPlan plan;
  VodPlayer* player = nullptr;
};

protocol::amf::Value str(std::string_view s) { return protocol::amf::Value::string(std::string(s)); }

}  // namespace

VodPlayer::VodPlayer(RtmpConnection& conn, uint32_t stream_id, VodRoot root, uint32_t playlist_max_entries)
    : conn_(conn),
      stream_id_(stream_id),
      root_(std::move(root)),
      playlist_max_entries_(playlist_max_entries),
      timer_(new uv_timer_t),
      alive_(std::make_shared<bool>(true)) {
  uv_timer_init(conn_.loop_context().loop(), timer_);
  timer_->data = this;
}

VodPlayer::~VodPlayer() {
  *alive_ = false;
  uv_timer_stop(timer_);
  uv_close(reinterpret_cast<uv_handle_t*>(timer_), [](uv_handle_t* h) { delete reinterpret_cast<uv_timer_t*>(h); });
}

void VodPlayer::on_timer(uv_timer_t* t) {
  auto* self = static_cast<VodPlayer*>(t->data);
  self->pacer_.end_burst();
  self->pump();
}

bool VodPlayer::play(Item item, bool reset) {
  if (!reset && playing_) {
    if (playlist_.size() >= playlist_max_entries_) return false;
    playlist_.push_back(std::move(item));
    return true;
  }
  playlist_.clear();
  start_item(std::move(item), true);
  return true;
}

void VodPlayer::start_item(Item item, bool first) {
  current_ = std::move(item);
  reads_cached_ = 0;
  reads_blocking_ = 0;
  ++generation_;
  reading_ = false;
  playing_ = true;
  pacer_.stop();
  file_.reset();
  uv_timer_stop(timer_);
  if (first) {
    ts_offset_ = 0;
    last_ts_ = 0;
  }
  uint64_t gen = generation_;
  std::weak_ptr<bool> alive = alive_;
  conn_.vod_files().open(root_, current_.name, [this, alive, gen](Result<VodFilePtr> r) {
    auto a = alive.lock();
    if (a && *a) on_file(std::move(r), gen);
  });
}

void VodPlayer::on_file(Result<VodFilePtr> result, uint64_t generation) {
  if (generation != generation_) return;
  auto& s = conn_.session();
  if (!result) {
    SLUICE_LOG_WARN("conn={} peer={} event=play_failed app={} stream=\"{}\" reason=\"{}\"", conn_.id(), conn_.peer(),
                    conn_.app(), current_.name, result.error().message());
    s.send_status(stream_id_, protocol::Status::PlayStreamNotFound, "No such stream: " + current_.name + ".",
                  {{"details", str(current_.name)}});
    playing_ = false;
    conn_.request_flush();
    if (!playlist_.empty()) finish_item();
    return;
  }
  file_ = std::move(*result);
  const auto& index = file_->index;
  bool continuation = last_ts_ != 0;
  uint32_t first = pacer_.start(index, current_.start_ms, current_.duration_ms, conn_.loop_context().now_ms());
  uint32_t first_dts = first < index.samples.size() ? index.samples[first].dts_ms : 0;
  if (continuation) {
    // The next playlist item continues the timeline just after the previous one.
    ts_offset_ = last_ts_ + 1 - first_dts;
    s.send_status(stream_id_, protocol::Status::PlayStart, "Started playing " + current_.name + ".",
                  {{"details", str(current_.name)}});
  } else {
    s.start_play(stream_id_, current_.name, true, true);
  }
  if (!index.metadata.empty())
    s.send_media(stream_id_, protocol::msg_type::kDataAmf0, first_dts + ts_offset_, index.metadata);
  if (!index.video_sequence_header.empty())
    s.send_media(stream_id_, protocol::msg_type::kVideo, first_dts + ts_offset_, index.video_sequence_header);
  if (!index.audio_sequence_header.empty())
    s.send_media(stream_id_, protocol::msg_type::kAudio, first_dts + ts_offset_, index.audio_sequence_header);
  SLUICE_LOG_INFO("conn={} peer={} event=vod_play app={} stream=\"{}\" file=\"{}\" duration_ms={} start_ms={}",
                  conn_.id(), conn_.peer(), conn_.app(), current_.name, file_->path, index.duration_ms, first_dts);
  pump();
}

void VodPlayer::pump() {
  while (file_ && playing_ && !reading_) {
    uint64_t now = conn_.loop_context().now_ms();
    auto next = pacer_.next(now, conn_.session().output_size() + conn_.write_queue_bytes());
    switch (next.kind) {
      case Pace::Idle:     // paused: resume() pumps
      case Pace::Blocked:  // on_drain resumes
        return;
      case Pace::Finished: finish_item(); return;
      case Pace::Wait:
      case Pace::Yield: uv_timer_start(timer_, &VodPlayer::on_timer, next.wake_at_ms - now, 0); return;
      case Pace::Read:
        if (!read_plan(next.plan)) return;  // a read in flight, or bytes queued: on_read / on_drain go on
        break;
    }
  }
}

bool VodPlayer::read_plan(const media::vod::ReadPlan& plan) {
  // A cached range is read here, into the loop's one buffer, and sent at once; otherwise the
  // threadpool reads it and on_read sends it.
  std::vector<uint8_t>& scratch = conn_.loop_context().file_scratch();
  scratch.resize(plan.bytes.size);
  if (!read_if_cached(file_->fd, plan.bytes.offset, scratch)) {
    ++reads_blocking_;
    start_blocking_read(plan);
    return false;
  }
  ++reads_cached_;
  return send_plan(plan, scratch, true);  // false: bytes queued, on_drain resumes
}

void VodPlayer::start_blocking_read(const media::vod::ReadPlan& plan) {
  auto* op = new ReadOp;
  op->buf.resize(plan.bytes.size);
  op->alive = alive_;
  op->file = file_;
  op->generation = generation_;
  op->plan = plan;
  op->player = this;
  op->req.data = op;
  uv_buf_t b = uv_buf_init(reinterpret_cast<char*>(op->buf.data()), static_cast<unsigned>(op->buf.size()));
  reading_ = true;
  int rc = uv_fs_read(conn_.loop_context().loop(), &op->req, file_->fd, &b, 1, static_cast<int64_t>(plan.bytes.offset),
                      [](uv_fs_t* req) {
                        std::unique_ptr<ReadOp> o(static_cast<ReadOp*>(req->data));
                        ssize_t result = req->result;
                        uv_fs_req_cleanup(req);
                        if (!*o->alive) return;
                        o->player->on_read(o->buf, result, o->generation, o->plan);
                      });
  if (rc != 0) {
    delete op;
    reading_ = false;
    conn_.session().send_status(stream_id_, protocol::Status::PlayFailed, "Read error.");
    playing_ = false;
    conn_.request_flush();
  }
}

void VodPlayer::on_read(std::span<const uint8_t> bytes, ssize_t result, uint64_t generation,
                        const media::vod::ReadPlan& plan) {
  reading_ = false;
  if (generation != generation_) {
    pump();
    return;
  }
  if (result < 0 || static_cast<uint64_t>(result) < plan.bytes.size) {
    SLUICE_LOG_WARN("conn={} event=vod_read_error file=\"{}\" offset={} result={}", conn_.id(), file_->path,
                    plan.bytes.offset, static_cast<long>(result));
    conn_.session().send_status(stream_id_, protocol::Status::PlayFailed, "The file could not be read.");
    playing_ = false;
    conn_.request_flush();
    return;
  }
  send_plan(plan, bytes, false);
  pump();
}

bool VodPlayer::send_plan(const media::vod::ReadPlan& plan, std::span<const uint8_t> bytes, bool read_on_loop) {
  // The one write path of VOD media: the messages are made in the loop's wire buffer (no
  // per-player buffer) and handed to the connection, which writes what the socket takes and
  // queues the rest behind the output already waiting; the flush that writes it calls on_drain,
  // which reads the next plan.
  const auto& index = file_->index;
  std::vector<uint8_t>& wire = conn_.loop_context().wire_scratch();
  wire.clear();
  for (uint32_t i = plan.first; i < plan.end; ++i) {
    const auto& s = index.samples[i];
    auto b = plan.sample_bytes(bytes, s);
    if (!b) break;
    auto prefix = media::vod::tag_prefix(index, s);
    if (!prefix) continue;  // a sample the index cannot describe is skipped, not fatal
    last_ts_ = s.dts_ms + ts_offset_;
    // FLV: the file bytes are the message (empty prefix); MP4: the prefix, then the sample.
    conn_.session().write_media_to(wire, stream_id_, s.type, last_ts_, prefix->span(), *b);
  }
  pacer_.sent(plan, read_on_loop);
  return wire.empty() || conn_.write_or_queue(wire);
}

void VodPlayer::finish_item() {
  auto& s = conn_.session();
  uv_timer_stop(timer_);
  if (!playlist_.empty()) {
    Item next = std::move(playlist_.front());
    playlist_.pop_front();
    s.send_play_status(stream_id_, protocol::Status::PlaySwitch, "Switching to " + next.name + ".");
    conn_.request_flush();
    start_item(std::move(next), false);
    return;
  }
  if (file_) {
    s.send_play_status(stream_id_, protocol::Status::PlayComplete, "Finished playing.",
                       {{"duration", protocol::amf::Value::number(file_->index.duration_ms / 1000.0)},
                        {"bytes", protocol::amf::Value::number(static_cast<double>(file_->size))}});
  }
  s.send_user_control({protocol::UserControlEvent::StreamEof, stream_id_, 0});
  s.send_status(stream_id_, protocol::Status::PlayStop, "Stopped playing " + current_.name + ".",
                {{"details", str(current_.name)}});
  SLUICE_LOG_INFO("conn={} peer={} event=vod_complete app={} stream=\"{}\" reads_cached={} reads_blocking={}",
                  conn_.id(), conn_.peer(), conn_.app(), current_.name, reads_cached_, reads_blocking_);
  playing_ = false;
  pacer_.stop();
  file_.reset();
  conn_.request_flush();
}

void VodPlayer::seek(double ms) {
  auto& s = conn_.session();
  if (!file_) {
    s.send_status(stream_id_, protocol::Status::SeekInvalidTime, "Nothing to seek in.");
    conn_.request_flush();
    return;
  }
  ++generation_;
  reading_ = false;
  uv_timer_stop(timer_);
  s.notify_seek(stream_id_, current_.name, {{"details", str(current_.name)}});
  conn_.request_flush();
  // The lead from the keyframe goes out even when paused; then the pause holds again.
  bool was_paused = pacer_.paused();
  pacer_.seek(ms, conn_.loop_context().now_ms());
  pump();
  if (was_paused) pause(true);
}

void VodPlayer::pause(bool paused) {
  auto& s = conn_.session();
  if (paused == pacer_.paused()) return;
  uint64_t now = conn_.loop_context().now_ms();
  if (paused) {
    pacer_.pause(now);
    uv_timer_stop(timer_);
    s.notify_pause(stream_id_, "Paused " + current_.name + ".", {{"details", str(current_.name)}});
  } else {
    pacer_.resume(now);
    s.notify_unpause(stream_id_, "Unpaused " + current_.name + ".", {{"details", str(current_.name)}});
    pump();
  }
  conn_.request_flush();
}

void VodPlayer::on_drain() { pump(); }

}  // namespace sluice::server
