#include "server/record/recorder.hpp"

#include <algorithm>
#include <ctime>

#include "config/record_template.hpp"
#include "media/flv/flv.hpp"
#include "media/frame.hpp"
#include "media/stream_hub.hpp"
#include "server/io/logging.hpp"
#include "server/record/record_file.hpp"

namespace sluice::server {

Recorder::Recorder(uv_loop_t* loop, media::StreamHub& hub, Settings settings)
    : loop_(loop), hub_(hub), settings_(std::move(settings)) {
  start_file();
  hub_.add_subscriber(this);
}

void Recorder::start_file() {
  int64_t now = static_cast<int64_t>(std::time(nullptr));
  const config::RecordNameParts parts{settings_.app, settings_.stream, segments_ + 1, now};
  file_ =
      std::make_shared<RecordFile>(loop_, settings_.dir, config::expand_record_template(settings_.path_template, parts),
                                   settings_.on_file_done, settings_.mp4);
  file_->open();
  ++segments_;
  file_bytes_ = 0;
  media::write_flv_header(true, true, batch_);
  for (const media::FramePtr* f : {&metadata_, &video_header_, &audio_header_}) {
    if (*f) media::append_tag((*f)->rtmp_type == 15 ? 18 : (*f)->rtmp_type, 0, (*f)->payload.span(), batch_);
  }
}

// Segments start on a keyframe (or, for audio-only streams, on any audio frame), so each file
// plays on its own from its first picture.
bool Recorder::cut_here(const media::Frame& f, uint32_t rel_ts) const {
  if (settings_.segment_duration_ms == 0 && settings_.segment_bytes == 0) return false;
  const bool start_point = seen_video_ ? (f.kind == media::FrameKind::Video && f.keyframe && !f.sequence_header)
                                       : f.kind == media::FrameKind::Audio && !f.sequence_header;
  if (!start_point) return false;
  return (settings_.segment_duration_ms != 0 && rel_ts >= settings_.segment_duration_ms) ||
         (settings_.segment_bytes != 0 && file_bytes_ + batch_.size() >= settings_.segment_bytes);
}

Recorder::~Recorder() {
  if (!stopped_) stop("stream ended");
  hub_.remove_subscriber(this);
}

void Recorder::on_frame(const media::FramePtr& f) {
  if (stopped_) return;
  if (f->metadata) metadata_ = f;
  if (f->sequence_header) (f->kind == media::FrameKind::Video ? video_header_ : audio_header_) = f;
  if (f->kind == media::FrameKind::Video) seen_video_ = true;
  uint32_t ts = 0;
  if (f->kind != media::FrameKind::Data) {
    // The clock starts at the first frame, not at a sequence header: a recording started
    // mid-stream gets the cached headers with their old timestamps, then the GOP from its keyframe.
    if (!have_base_ && !f->sequence_header) {
      have_base_ = true;
      base_ts_ = f->timestamp;
    }
    int32_t rel = have_base_ ? static_cast<int32_t>(f->timestamp - base_ts_) : 0;
    ts = rel > 0 ? static_cast<uint32_t>(rel) : 0;
    if (cut_here(*f, ts)) {
      flush();
      file_->finish("segment");
      start_file();
      base_ts_ = f->timestamp;
      ts = 0;
      last_ts_ = 0;
    }
    last_ts_ = std::max(last_ts_, ts);
  }
  const uint8_t type = f->rtmp_type == 15 ? 18 : f->rtmp_type;  // AMF3 data went in as its AMF0 body
  media::append_tag(type, ts, f->payload.span(), batch_);
  if (batch_.size() >= kBatchBytes) flush();
  if (file_->failed()) {
    stop("write failed: " + file_->error());
  } else if (file_->queued_bytes() > kMaxQueuedBytes) {
    SLUICE_LOG_ERROR("event=record_overflow file=\"{}\" queued={} limit={}", file_->part_path(), file_->queued_bytes(),
                     kMaxQueuedBytes);
    stop("the disk is slower than the stream (queue over " + std::to_string(kMaxQueuedBytes) + " bytes)");
  }
}

void Recorder::flush() {
  if (batch_.empty()) return;
  appended_ += batch_.size();
  file_bytes_ += batch_.size();
  file_->append(std::move(batch_));
  batch_.clear();
}

void Recorder::stop(const std::string& why) {
  if (stopped_) return;
  flush();
  stopped_ = true;
  file_->finish(why);
}

uint64_t Recorder::bytes() const { return appended_ + batch_.size(); }

const std::string& Recorder::path() const { return file_->part_path(); }

}  // namespace sluice::server
