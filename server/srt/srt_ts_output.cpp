#include "server/srt/srt_ts_output.hpp"

namespace sluice::server {

namespace {
// A flush moves at most this much of the reader's queue per pass, and makes a few passes: one
// reader cannot keep the loop, and libsrt's send buffer takes a GOP in a few passes.
constexpr size_t kFillBytes = 256 * 1024;
constexpr int kPassesPerFlush = 8;
// While a join's backlog is paced, fills are small, so the pace is kept within a few ms of media.
constexpr size_t kPacedFillBytes = 4 * 1024;
}  // namespace

SrtTsOutput::~SrtTsOutput() {
  if (pace_timer_ == nullptr) return;
  uv_timer_stop(pace_timer_);
  uv_close(reinterpret_cast<uv_handle_t*>(pace_timer_),
           [](uv_handle_t* h) { delete reinterpret_cast<uv_timer_t*>(h); });
}

void SrtTsOutput::pace(uint64_t wait_ms) {
  if (pace_timer_ == nullptr) {
    pace_timer_ = new uv_timer_t;
    uv_timer_init(loop_.loop(), pace_timer_);
    pace_timer_->data = this;
  }
  pacing_ = true;
  uv_timer_start(pace_timer_, &SrtTsOutput::on_pace_timer, wait_ms, 0);
}

void SrtTsOutput::on_pace_timer(uv_timer_t* t) {
  auto* self = static_cast<SrtTsOutput*>(t->data);
  self->pacing_ = false;
  self->flush();
}

void SrtTsOutput::request_flush() {
  if (!closed_) loop_.flush().flush_soon(this);
}

void SrtTsOutput::request_held_flush() {
  if (!closed_) loop_.flush().flush_held(this);
}

void SrtTsOutput::schedule_close(std::string reason) {
  if (closing_soon()) return;
  pending_close_reason = std::move(reason);
  loop_.flush().flush_soon(this);
}

bool SrtTsOutput::send_pending() {
  std::string error;
  switch (sender_.send(output_socket(), loop_.config().srt.payload_size, error)) {
    case SrtTsSender::Outcome::Sent: return true;
    case SrtTsSender::Outcome::Blocked:
      blocked_ = true;
      watch_output(true);
      return false;
    case SrtTsSender::Outcome::Failed: close(error); return false;
  }
  return false;
}

void SrtTsOutput::on_writable() {
  if (!blocked_) return;
  blocked_ = false;
  watch_output(false);
  flush();
}

void SrtTsOutput::flush() {
  if (closed_ || !reader_ || blocked_ || pacing_) return;
  bool more = true;
  for (int pass = 0; pass < kPassesPerFlush && more; ++pass) {
    if (!send_pending()) return;  // SRT_EPOLL_OUT goes on
    // The clock now, not the loop's (the time its iteration began): on a busy loop that is tens of
    // ms old, and a join's pace counted from a stale start ran ahead by twice that
    // (srt_join_pace_test saw pictures 16 and 32 ms past the pace's bound).
    const uint64_t now = uv_hrtime() / 1'000'000;
    if (const uint64_t wait = reader_->catch_up_wait_ms(now); wait > 0) return pace(wait);
    more = reader_->fill(sender_.buffer(), reader_->catching_up() ? kPacedFillBytes : kFillBytes, now);
    if (!send_pending()) return;
  }
  if (more) return request_flush();
  if (reader_->ended()) close(ended_reason());
}

}  // namespace sluice::server
