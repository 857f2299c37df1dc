#include "server/http/sendfile.hpp"

#include <sys/sendfile.h>
#include <unistd.h>

#include <cerrno>

#include "server/io/uv_handle.hpp"

namespace sluice::server {

namespace {
// One pool job sends at most this much, then yields the pool thread to other file work (VOD index
// reads, other downloads) even when the socket could take more.
constexpr uint64_t kBytesPerJob = 8 << 20;
// Largest single sendfile(2) call (Linux caps one call near 2 GiB anyway).
constexpr uint64_t kBytesPerCall = 1 << 20;
}  // namespace

int HttpSendfile::start(uv_os_fd_t socket_fd, uv_file file_fd, uint64_t offset, uint64_t length, Progress progress,
                        Done done) {
  if (active_ || closing_) return UV_EBUSY;
  if (socket_ < 0) {
    socket_ = ::dup(socket_fd);
    if (socket_ < 0) return uv_translate_sys_error(errno);
    int rc = uv_poll_init_socket(loop_, &poll_, socket_);
    if (rc != 0) {
      ::close(socket_);
      socket_ = -1;
      return rc;
    }
    poll_.data = this;
    poll_initialized_ = true;
  }
  file_fd_ = file_fd;
  offset_ = offset;
  remaining_ = length;
  progress_ = std::move(progress);
  done_ = std::move(done);
  active_ = true;
  // Even an empty range completes through the pool, never from inside start().
  queue_work();
  return 0;
}

void HttpSendfile::queue_work() {
  sent_ = 0;
  error_ = 0;
  would_block_ = false;
  work_req_.data = this;
  work_running_ = true;
  int rc = uv_queue_work(loop_, &work_req_, &HttpSendfile::work, &HttpSendfile::after_work);
  if (rc != 0) {
    work_running_ = false;
    finish(rc);
  }
}

void HttpSendfile::work(uv_work_t* req) {
  auto* self = static_cast<HttpSendfile*>(req->data);
  uint64_t budget = std::min(self->remaining_, kBytesPerJob);
  off_t off = static_cast<off_t>(self->offset_);
  while (self->sent_ < budget) {
    size_t want = static_cast<size_t>(std::min(budget - self->sent_, kBytesPerCall));
    ssize_t n = ::sendfile(self->socket_, self->file_fd_, &off, want);
    if (n > 0) {
      self->sent_ += static_cast<uint64_t>(n);
      continue;
    }
    if (n == 0) {
      // The file is shorter than when it was measured (truncated while being sent).
      self->error_ = UV_EOF;
      break;
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      self->would_block_ = true;
    } else {
      self->error_ = uv_translate_sys_error(errno);
    }
    break;
  }
}

void HttpSendfile::after_work(uv_work_t* req, int status) {
  auto* self = static_cast<HttpSendfile*>(req->data);
  self->work_running_ = false;
  if (self->closing_) {
    self->maybe_closed();
    return;
  }
  self->offset_ += self->sent_;
  self->remaining_ -= self->sent_;
  if (self->sent_ > 0 && self->progress_) self->progress_(self->sent_);
  if (self->closing_) {  // progress() may have closed the connection
    self->maybe_closed();
    return;
  }
  if (status != 0) return self->finish(status);
  if (self->error_ != 0) return self->finish(self->error_);
  if (self->remaining_ == 0) return self->finish(0);
  if (self->would_block_) {
    int rc = uv_poll_start(&self->poll_, UV_WRITABLE, &HttpSendfile::on_writable);
    if (rc != 0) self->finish(rc);
    return;
  }
  self->queue_work();
}

void HttpSendfile::on_writable(uv_poll_t* handle, int status, int) {
  auto* self = static_cast<HttpSendfile*>(handle->data);
  uv_poll_stop(handle);
  if (self->closing_) return;
  if (status < 0) return self->finish(status);
  self->queue_work();
}

void HttpSendfile::finish(int status) {
  active_ = false;
  file_fd_ = -1;
  Done done = std::move(done_);
  progress_ = nullptr;
  done_ = nullptr;
  if (done) done(status);
}

void HttpSendfile::close(std::function<void()> closed) {
  if (closing_) return;
  closing_ = true;
  active_ = false;
  progress_ = nullptr;
  done_ = nullptr;
  closed_ = std::move(closed);
  if (poll_initialized_) {
    close_handle(&poll_, [](uv_handle_t* h) {
      auto* self = static_cast<HttpSendfile*>(h->data);
      self->poll_closed_ = true;
      self->maybe_closed();
    });
  } else {
    poll_closed_ = true;
  }
  maybe_closed();
}

void HttpSendfile::maybe_closed() {
  if (!closing_ || work_running_ || !poll_closed_) return;
  if (socket_ >= 0) {
    ::close(socket_);
    socket_ = -1;
  }
  auto closed = std::move(closed_);
  closed_ = nullptr;
  if (closed) closed();
}

}  // namespace sluice::server
