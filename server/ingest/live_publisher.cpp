#include "server/ingest/live_publisher.hpp"

#include "server/cluster/cluster_service.hpp"
#include "server/hls/hls_service.hpp"

#include "media/frame.hpp"
#include "media/stream_hub.hpp"
#include "server/live/stream_registry.hpp"
#include "server/live/timestamp_jump_log.hpp"
#include "server/io/logging.hpp"
#include "config/config.hpp"
#include "server/record/recorder.hpp"
#include "server/relay/relay_manager.hpp"

namespace sluice::server {

LivePublisher::LivePublisher(PublisherHost& host, uint32_t stream_id, std::string key, std::string name,
                             uint32_t timestamp_jump_ms, std::optional<uint32_t> continue_after)
    : host_(host),
      services_(host.publish_services()),
      stream_id_(stream_id),
      key_(std::move(key)),
      name_(std::move(name)) {
  // The registry created the hub when the name was claimed.
  hub_ = services_.registry.find(key_);
  publication_.emplace(*hub_, timestamp_jump_ms, continue_after);
  last_frame_ms_ = services_.loop.now_ms();
  services_.registry.set_seat(key_, &host_.publishing_peer(), this);
}

uint64_t LivePublisher::quiet_ms() const {
  const uint64_t now = services_.loop.now_ms();
  return now > last_frame_ms_ ? now - last_frame_ms_ : 0;
}

std::optional<uint32_t> LivePublisher::give_up(const std::string& why, const SessionPeer* taker) {
  cluster_successor_ = taker ? Successor::SameLoop : Successor::OtherLoop;
  // The hub's publication goes on for the taker: its players see no end, only the new frames.
  const uint32_t latest = publication_->end_quietly();
  host_.end_replaced_publisher(stream_id_, why, taker == &host_.publishing_peer());  // destroys this
  return latest;
}

void LivePublisher::start_relays(const config::AppConfig& app,
                                 const std::vector<std::pair<std::string, std::string>>& extra) {
  if (RelayManager* relays = services_.relays) relays->on_publish_start(app, name_, *hub_, extra);
  if (HlsService* hls = services_.hls) hls->on_publish(app, key_);
}

LivePublisher::~LivePublisher() {
  // The recording first: it is one of the hub's subscribers, and the hub may go with the claim.
  if (recorder_) recorder_->stop("unpublish");
  recorder_.reset();
  if (RelayManager* relays = services_.relays) relays->on_publish_end(key_);
  const uint64_t frames = publication_->frames(), bytes = publication_->bytes();
  const uint64_t jumps = publication_->timestamp_jumps();
  publication_.reset();
  SLUICE_LOG_INFO("conn={} event=publish_end stream={} frames={} bytes={} timestamp_jumps={}",
                  host_.publishing_peer().id(), key_, frames, bytes, jumps);
  services_.registry.release_publisher(key_, &host_.publishing_peer());
  if (cluster::ClusterService* c = services_.cluster) {
    if (cluster_successor_ == Successor::None) c->release(key_);
    if (cluster_successor_ == Successor::OtherLoop) c->hand_over(key_);
  }
}

void LivePublisher::on_message(protocol::Message& m) { on_frame(m.type, m.timestamp, std::move(m.payload)); }

void LivePublisher::on_frame(uint8_t type, uint32_t timestamp, Slice payload) {
  last_frame_ms_ = services_.loop.now_ms();
  std::optional<media::TimestampCorrector::Jump> jump;
  media::FramePtr frame = publication_->publish(type, timestamp, std::move(payload), last_frame_ms_, jump);
  if (jump) log_jump(*jump);
  if (frame && !logged_codecs_ && frame->sequence_header && frame->kind == media::FrameKind::Video) {
    logged_codecs_ = true;
    SLUICE_LOG_INFO("conn={} event=stream_info stream={} {}", host_.publishing_peer().id(), key_,
                    hub_->info().summary());
  }
}

void LivePublisher::start_recording(const config::AppConfig& app) {
  Recorder::Settings s;
  s.dir = app.record.dir;
  s.path_template = app.record.path;
  s.app = app.name;
  s.stream = name_;
  s.mp4 = app.record.mp4;
  s.segment_duration_ms = static_cast<uint64_t>(app.record.segment_duration.count());
  s.segment_bytes = app.record.segment_bytes;
  // The file may finish after this publisher is gone: the callback holds only the loop's gate
  // (which outlives every recording: a stopping server waits for them) and copies.
  HookEvent base = host_.hook_base_event(name_);
  s.on_file_done = [gate = &services_.gate, base](const RecordFile::Done& d) {
    HookEvent e = base;
    e.path = d.path;
    e.mp4_path = d.mp4_path;
    e.started_unix = d.started_unix;
    e.ended_unix = d.ended_unix;
    e.duration_ms = d.duration_ms;
    e.bytes = d.bytes;
    e.reason = d.reason;
    e.error = d.error;
    gate->notify_record_done(std::move(e));
  };
  recorder_ = std::make_unique<Recorder>(services_.loop.loop(), *hub_, s);
  SLUICE_LOG_INFO("conn={} event=record_start stream={} dir=\"{}\"", host_.publishing_peer().id(), key_, s.dir);
}

bool LivePublisher::stop_recording(const std::string& why) {
  if (!recording()) return false;
  recorder_->stop(why);
  recorder_.reset();
  SLUICE_LOG_INFO("conn={} event=record_stop stream={} reason=\"{}\"", host_.publishing_peer().id(), key_, why);
  return true;
}

bool LivePublisher::recording() const { return recorder_ && recorder_->recording(); }

void LivePublisher::log_jump(const media::TimestampCorrector::Jump& j) {
  log_timestamp_jump("conn=" + std::to_string(host_.publishing_peer().id()), key_, j, jump_log_,
                     services_.loop.now_ms());
}

}  // namespace sluice::server
