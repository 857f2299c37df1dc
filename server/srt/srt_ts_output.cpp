#include "server/srt/srt_ts_output.hpp"

namespace sluice::server {

namespace {
// A flush moves at most this much of the reader's queue per pass, and makes a few passes: one
// reader cannot keep the loop, and libsrt's send buffer takes a GOP in a few passes.
constexpr size_t kFillBytes = 256 * 1024;
constexpr int kPassesPerFlush = 8;
}  // namespace

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
  if (closed_ || !reader_ || blocked_) return;
  bool more = true;
  for (int pass = 0; pass < kPassesPerFlush && more; ++pass) {
    if (!send_pending()) return;  // SRT_EPOLL_OUT goes on
    more = reader_->fill(sender_.buffer(), kFillBytes);
    if (!send_pending()) return;
  }
  if (more) return request_flush();
  if (reader_->ended()) close(ended_reason());
}

}  // namespace sluice::server
