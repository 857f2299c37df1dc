#include "server/http/tls_file_sender.hpp"

#include <algorithm>

namespace sluice::server {

int TlsFileSender::start(uv_file file_fd, uint64_t offset, uint64_t length, Deliver deliver, Done done) {
  if (active_) return UV_EBUSY;
  fd_ = file_fd;
  offset_ = offset;
  left_ = length;
  deliver_ = std::move(deliver);
  done_ = std::move(done);
  active_ = true;
  read_next();
  return 0;
}

void TlsFileSender::read_next() {
  if (left_ == 0) return finish(0);
  buffer_.resize(static_cast<size_t>(std::min<uint64_t>(left_, kPieceBytes)));
  uv_buf_t buf = uv_buf_init(reinterpret_cast<char*>(buffer_.data()), static_cast<unsigned>(buffer_.size()));
  req_.data = this;
  reading_ = true;
  int rc = uv_fs_read(loop_, &req_, fd_, &buf, 1, static_cast<int64_t>(offset_), &TlsFileSender::on_read);
  if (rc != 0) {
    reading_ = false;
    finish(rc);
  }
}

void TlsFileSender::on_read(uv_fs_t* req) {
  auto* self = static_cast<TlsFileSender*>(req->data);
  const ssize_t n = req->result;
  uv_fs_req_cleanup(req);
  self->reading_ = false;
  if (self->closed_) {  // closed meanwhile: nothing more to tell anyone
    if (!self->closed_called_) {
      self->closed_called_ = true;
      auto cb = std::move(self->closed_);
      cb();
    }
    return;
  }
  if (n < 0) return self->finish(static_cast<int>(n));
  if (n == 0) return self->finish(UV_EOF);  // the file is shorter than the head promised
  self->offset_ += static_cast<uint64_t>(n);
  self->left_ -= static_cast<uint64_t>(n);
  self->waiting_for_drain_ = true;
  self->deliver_(std::span<const uint8_t>(self->buffer_.data(), static_cast<size_t>(n)));
}

void TlsFileSender::on_drained() {
  if (!active_ || reading_ || !waiting_for_drain_) return;
  waiting_for_drain_ = false;
  read_next();
}

void TlsFileSender::finish(int status) {
  active_ = false;
  waiting_for_drain_ = false;
  buffer_ = {};
  if (Done d = std::move(done_)) d(status);
}

void TlsFileSender::close(std::function<void()> closed) {
  active_ = false;
  deliver_ = nullptr;
  done_ = nullptr;
  if (reading_) {
    closed_ = std::move(closed);  // on_read calls it
    if (!closed_) closed_ = [] {};
    return;
  }
  closed_called_ = true;
  closed();
}

}  // namespace sluice::server
