#include "server/io/write_ring.hpp"

#include <liburing.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>

#include "server/io/logging.hpp"
#include "server/io/uv_handle.hpp"

namespace sluice::server {

namespace {

// user_data of the cancel request submit() sends if a write did not complete inline.
constexpr uint64_t kCancelTag = ~uint64_t{0};

}  // namespace

WriteRing::WriteRing() = default;

WriteRing::~WriteRing() {
  if (ring_) io_uring_queue_exit(ring_.get());
}

bool WriteRing::open(unsigned entries, std::string& why) {
  if (ring_) return true;
  auto ring = std::make_unique<io_uring>();
  io_uring_params params{};
  // SUBMIT_ALL: one bad request (a socket closed under it) must not stop the ones after it.
  params.flags = IORING_SETUP_SUBMIT_ALL;
  int rc = io_uring_queue_init_params(entries, ring.get(), &params);
  if (rc < 0) {
    why = std::string("io_uring_setup: ") + std::strerror(-rc);
    return false;
  }
  ring_ = std::move(ring);
  slots_.resize(ring_->sq.ring_entries);
  results_.reserve(ring_->sq.ring_entries);
  return true;
}

bool WriteRing::queue(int fd, std::span<const uv_buf_t> bufs, RingWriteTarget* target, bool made_for_it) {
  if (!ring_) return false;
  const size_t pieces = std::min<size_t>(bufs.size(), IOV_MAX);
  size_t bytes = 0;
  if (made_for_it) {
    for (size_t i = 0; i < pieces; ++i) bytes += bufs[i].len;
  }
  if (queued_ == slots_.size() ||
      (bytes > 0 && submit_bytes_ > 0 && queued_ > 0 && queued_bytes_ + bytes > submit_bytes_)) {
    submit();
    if (!ring_) return false;  // that submit failed and gave up the ring
  }
  queued_bytes_ += bytes;
  io_uring_sqe* sqe = io_uring_get_sqe(ring_.get());
  if (sqe == nullptr) return false;  // cannot happen after submit(); write the usual way anyway
  Slot& slot = slots_[queued_];
  slot.target = target;
  slot.done = false;
  slot.msg = msghdr{};
  // uv_buf_t is declared with struct iovec's layout on Unix (libuv's own writev relies on it).
  slot.msg.msg_iov = reinterpret_cast<iovec*>(const_cast<uv_buf_t*>(bufs.data()));
  // sendmsg refuses more than IOV_MAX pieces (a slow player's backlog of small audio messages can
  // have more); the rest is then a partial write, as libuv's own writev caps it.
  slot.msg.msg_iovlen = pieces;
  io_uring_prep_sendmsg(sqe, fd, &slot.msg, MSG_DONTWAIT | MSG_NOSIGNAL);
  io_uring_sqe_set_data64(sqe, queued_);
  ++queued_;
  return true;
}

bool WriteRing::queue(uv_stream_t* stream, std::span<const uv_buf_t> bufs, RingWriteTarget* target, bool made_for_it) {
  uv_os_fd_t fd;
  if (uv_fileno(as_handle(stream), &fd) != 0) return false;
  return queue(fd, bufs, target, made_for_it);
}

void WriteRing::submit() {
  if (queued_ == 0) return;
  size_t expected = queued_;
  // The kernel takes the queued requests in order; with SUBMIT_ALL a call stops early only when
  // it cannot take more at all (out of memory, say).
  size_t submitted = 0;
  int error = 0;
  while (submitted < expected) {
    int rc = io_uring_submit(ring_.get());
    if (rc == -EINTR) continue;
    if (rc <= 0) {
      error = rc;
      break;
    }
    submitted += static_cast<size_t>(rc);
  }
  ++submits_;
  writes_ += submitted;
  collect_results(submitted, submitted == expected);
  // Requests the kernel never took wrote nothing: EAGAIN lets their owners hand the whole batch to
  // libuv. They are still in the submission queue, so this ring must not be entered again.
  for (size_t i = submitted; i < expected; ++i) results_.push_back({slots_[i].target, UV_EAGAIN});
  queued_ = 0;
  queued_bytes_ = 0;
  if (submitted < expected) {
    SLUICE_LOG_WARN(
        "event=io_uring state=off reason=\"io_uring_enter: {}\" (players are written one writev each "
        "from now on)",
        std::strerror(error < 0 ? -error : EIO));
    io_uring_queue_exit(ring_.get());
    ring_.reset();
  }
  // Deliver after the ring is empty again: a target may queue (or close, which submits) from here.
  std::vector<Result> delivering;
  delivering.swap(results_);
  for (const Result& r : delivering) r.target->on_ring_write(r.value);
  delivering.clear();
  if (results_.empty()) results_.swap(delivering);  // keep the capacity
}

void WriteRing::collect_results(size_t expected, bool may_submit) {
  size_t got = 0;
  if (expected == 0) return;
  bool cancelled = false;
  while (got < expected) {
    io_uring_cqe* cqe = nullptr;
    unsigned head;
    unsigned seen = 0;
    io_uring_for_each_cqe(ring_.get(), head, cqe) {
      ++seen;
      uint64_t tag = io_uring_cqe_get_data64(cqe);
      if (tag == kCancelTag || tag >= expected) continue;
      // A stream socket's sendmsg returns bytes or -errno; libuv's codes are -errno on Unix.
      if (slots_[tag].done) continue;
      slots_[tag].done = true;
      int value = cqe->res == -ECANCELED ? UV_EAGAIN : cqe->res;
      results_.push_back({slots_[tag].target, value});
      ++got;
    }
    io_uring_cq_advance(ring_.get(), seen);
    if (got == expected) break;
    // MSG_DONTWAIT sends finish inside the submit call. Should one have been parked waiting for
    // room instead, cancel it (it wrote nothing: that is EAGAIN) rather than block the loop.
    if (!may_submit) break;  // submitting a cancel would also submit the requests left behind
    if (!cancelled) {
      cancelled = true;
      io_uring_sqe* sqe = io_uring_get_sqe(ring_.get());
      if (sqe != nullptr) {
        io_uring_prep_cancel64(sqe, 0, IORING_ASYNC_CANCEL_ANY);
        io_uring_sqe_set_data64(sqe, kCancelTag);
      }
      io_uring_submit(ring_.get());
    }
    io_uring_cqe* wait = nullptr;
    int rc = io_uring_wait_cqe(ring_.get(), &wait);
    if (rc < 0 && rc != -EINTR) break;  // the ring is broken: report what we have
  }
  // The ring broke and never reported these: whether they were written is unknown, so the
  // connections must not go on (a resend could duplicate bytes): an I/O error closes them.
  for (size_t i = 0; i < expected; ++i) {
    if (!slots_[i].done) results_.push_back({slots_[i].target, UV_EIO});
  }
}

}  // namespace sluice::server
