#include "server/record/recorder.hpp"

#include <ctime>

#include "media/frame.hpp"
#include "media/flv.hpp"
#include "media/stream_hub.hpp"
#include "server/io/logging.hpp"
#include "server/record/record_file.hpp"

namespace sluice::server {

Recorder::Recorder(uv_loop_t* loop, media::StreamHub& hub, std::string dir, std::string base)
    : hub_(hub), file_(std::make_shared<RecordFile>(loop, std::move(dir), std::move(base))) {
  file_->open();
  media::write_flv_header(true, true, batch_);
  hub_.add_subscriber(this);
}

Recorder::~Recorder() {
  if (!stopped_) stop("stream ended");
  hub_.remove_subscriber(this);
}

void Recorder::on_frame(const media::FramePtr& f) {
  if (stopped_) return;
  uint32_t ts = 0;
  if (f->kind != media::FrameKind::Data) {
    if (!have_base_) {
      have_base_ = true;
      base_ts_ = f->timestamp;
    }
    int32_t rel = static_cast<int32_t>(f->timestamp - base_ts_);
    ts = rel > 0 ? static_cast<uint32_t>(rel) : 0;
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

std::string recording_base_name(const std::string& stream, int64_t unix_seconds) {
  std::string name = stream;
  for (char& c : name) c = c == '/' ? '_' : c;
  std::time_t t = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
  return name + "-" + stamp;
}

}  // namespace sluice::server
