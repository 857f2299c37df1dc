#include "server/rtmp/vod_player.hpp"

#include <algorithm>

#include "media/vod/tag_body.hpp"
#include "protocol/session.hpp"
#include "server/io/cached_read.hpp"
#include "server/rtmp/connection.hpp"
#include "server/vod/files.hpp"
#include "server/io/logging.hpp"

namespace sluice::server {

namespace {

// At most this much of a file is read per read request (one keyframe may exceed it: plans always
// include their first sample).
constexpr uint64_t kReadBudget = 64 * 1024;
// No reading while the connection has more than this waiting to be written: a player that reads
// slowly holds the server at this much memory, not the whole file.
constexpr size_t kMaxPendingBytes = 256 * 1024;
// Cached reads happen on the loop: after this many bytes in one go a player yields (a 1 ms timer)
// so that a new player's first seconds of media do not delay everyone else.
constexpr uint64_t kMaxBurstBytes = 512 * 1024;
// How far ahead of real time we send: the player's buffer length, within these bounds (rtmpdump
// asks for a 10-hour buffer, which would mean "send the whole file now").
constexpr uint32_t kMinLeadMs = 1000;
constexpr uint32_t kMaxLeadMs = 5000;
constexpr uint32_t kDefaultLeadMs = 3000;
constexpr uint64_t kMaxTimerMs = 1000;
constexpr uint64_t kRefillStepMs = 1000;

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

VodPlayer::VodPlayer(RtmpConnection& conn, uint32_t stream_id, std::string root)
    : conn_(conn), stream_id_(stream_id), root_(std::move(root)), timer_(new uv_timer_t), alive_(std::make_shared<bool>(true)) {
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
  self->burst_bytes_ = 0;
  self->pump();
}

void VodPlayer::schedule(uint64_t delay_ms) {
  uv_timer_start(timer_, &VodPlayer::on_timer, std::clamp<uint64_t>(delay_ms, 1, kMaxTimerMs), 0);
}

uint32_t VodPlayer::lead_ms() const {
  return buffer_ms_ == 0 ? kDefaultLeadMs : std::clamp(buffer_ms_, kMinLeadMs, kMaxLeadMs);
}

uint64_t VodPlayer::media_clock() const {
  uint64_t now = paused_ ? paused_at_wall_ : conn_.loop_context().now_ms();
  return start_media_ms_ + (now - start_wall_ms_);
}

void VodPlayer::play(Item item, bool reset) {
  if (!reset && playing_) {
    playlist_.push_back(std::move(item));
    return;
  }
  playlist_.clear();
  start_item(std::move(item), true);
}

void VodPlayer::start_item(Item item, bool first) {
  current_ = std::move(item);
  reads_cached_ = 0;
  reads_blocking_ = 0;
  ++generation_;
  reading_ = false;
  playing_ = true;
  paused_ = false;
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
  uint32_t first = current_.start_ms > 0 ? index.seek(static_cast<uint32_t>(current_.start_ms)) : 0;
  uint32_t first_dts = first < index.samples.size() ? index.samples[first].dts_ms : 0;
  if (continuation) {
    // The next playlist item continues the timeline just after the previous one.
    ts_offset_ = last_ts_ + 1 - first_dts;
    s.send_status(stream_id_, protocol::Status::PlayStart, "Started playing " + current_.name + ".",
                  {{"details", str(current_.name)}});
  } else {
    s.start_play(stream_id_, current_.name, true, true);
  }
  if (!index.metadata.empty()) s.send_media(stream_id_, protocol::msg_type::kDataAmf0, first_dts + ts_offset_, index.metadata);
  if (!index.video_sequence_header.empty())
    s.send_media(stream_id_, protocol::msg_type::kVideo, first_dts + ts_offset_, index.video_sequence_header);
  if (!index.audio_sequence_header.empty())
    s.send_media(stream_id_, protocol::msg_type::kAudio, first_dts + ts_offset_, index.audio_sequence_header);
  end_ms_ = current_.duration_ms >= 0 ? static_cast<uint32_t>(std::max(0.0, current_.start_ms) + current_.duration_ms)
                                      : UINT32_MAX;
  SLUICE_LOG_INFO("conn={} peer={} event=vod_play app={} stream=\"{}\" file=\"{}\" duration_ms={} start_ms={}",
                  conn_.id(), conn_.peer(), conn_.app(), current_.name, file_->path, index.duration_ms, first_dts);
  begin_at(first);
}

void VodPlayer::begin_at(uint32_t sample) {
  const auto& samples = file_->index.samples;
  next_ = sample;
  end_ = static_cast<uint32_t>(samples.size());
  start_media_ms_ = next_ < end_ ? samples[next_].dts_ms : 0;
  start_wall_ms_ = conn_.loop_context().now_ms();
  pump();
}

void VodPlayer::pump() {
  for (;;) {
    if (!file_ || paused_ || reading_ || !playing_) return;
    const auto& index = file_->index;
    if (next_ >= end_ || index.samples[next_].dts_ms >= end_ms_) {
      finish_item();
      return;
    }
    if (conn_.session().output_size() + conn_.write_queue_bytes() > kMaxPendingBytes) return;  // on_drain resumes
    // Refill in steps of about a second of media, not one frame at a time: a player then costs
    // about one timer wake-up per second.
    uint64_t clock = media_clock();
    uint64_t horizon = clock + lead_ms();
    uint64_t low_water = horizon - std::min<uint64_t>(lead_ms() / 2, kRefillStepMs);
    const auto& first = index.samples[next_];
    if (first.dts_ms > low_water) {
      schedule(first.dts_ms - low_water);
      return;
    }
    if (burst_bytes_ >= kMaxBurstBytes) {
      schedule(0);
      return;
    }
    uint32_t last = next_;
    while (last < end_ && index.samples[last].dts_ms <= horizon && index.samples[last].dts_ms < end_ms_) ++last;
    media::vod::ReadPlan plan = index.plan_read(next_, last, kReadBudget);
    // A cached range is read here, into the loop's one buffer. When nothing else waits on the
    // connection it is chunked into the loop's wire buffer and written at once: no per-player
    // buffer at all, and on to the next plan. Otherwise it joins the connection's output, and
    // the flush that writes it calls on_drain, which reads the next.
    std::vector<uint8_t>& scratch = conn_.loop_context().file_scratch();
    scratch.resize(plan.bytes.size);
    if (!read_if_cached(file_->fd, plan.bytes.offset, scratch)) {
      ++reads_blocking_;
      start_blocking_read(plan);
      return;
    }
    ++reads_cached_;
    burst_bytes_ += plan.bytes.size;
    if (conn_.can_write_now()) {
      std::vector<uint8_t>& wire = conn_.loop_context().wire_scratch();
      wire.clear();
      send_plan(plan, scratch, &wire);
      if (!wire.empty() && !conn_.write_now(wire)) return;  // the rest is queued: on_drain resumes
      continue;
    }
    send_plan(plan, scratch, nullptr);
    if (conn_.session().has_output()) return;  // nothing to write (every sample skipped): go on
  }
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
  send_plan(plan, bytes, nullptr);
  pump();
}

void VodPlayer::send_plan(const media::vod::ReadPlan& plan, std::span<const uint8_t> bytes,
                          std::vector<uint8_t>* direct) {
  const auto& index = file_->index;
  for (uint32_t i = plan.first; i < plan.end; ++i) {
    const auto& s = index.samples[i];
    auto b = plan.sample_bytes(bytes, s);
    if (!b) break;
    send_sample(s, *b, direct);
  }
  next_ = plan.end;
  if (!direct) conn_.request_flush();
}

void VodPlayer::send_sample(const media::vod::Sample& s, std::span<const uint8_t> bytes,
                            std::vector<uint8_t>* direct) {
  auto prefix = media::vod::tag_prefix(file_->index, s);
  if (!prefix) return;  // a sample the index cannot describe is skipped, not fatal
  last_ts_ = s.dts_ms + ts_offset_;
  // FLV: the file bytes are the message (empty prefix); MP4: the prefix, then the sample.
  if (direct) {
    conn_.session().write_media_to(*direct, stream_id_, s.type, last_ts_, prefix->span(), bytes);
  } else {
    conn_.session().send_media(stream_id_, s.type, last_ts_, prefix->span(), bytes);
  }
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
  uint32_t target = ms > 0 ? static_cast<uint32_t>(ms) : 0;
  uint32_t sample = file_->index.seek(target);
  s.notify_seek(stream_id_, current_.name, {{"details", str(current_.name)}});
  conn_.request_flush();
  bool was_paused = paused_;
  paused_ = false;
  begin_at(sample);
  if (was_paused) pause(true);
}

void VodPlayer::pause(bool paused) {
  auto& s = conn_.session();
  if (paused == paused_) return;
  uint64_t now = conn_.loop_context().now_ms();
  if (paused) {
    paused_ = true;
    paused_at_wall_ = now;
    uv_timer_stop(timer_);
    s.notify_pause(stream_id_, "Paused " + current_.name + ".", {{"details", str(current_.name)}});
  } else {
    start_wall_ms_ += now - paused_at_wall_;
    paused_ = false;
    s.notify_unpause(stream_id_, "Unpaused " + current_.name + ".", {{"details", str(current_.name)}});
    pump();
  }
  conn_.request_flush();
}

void VodPlayer::on_drain() { pump(); }

}  // namespace sluice::server
