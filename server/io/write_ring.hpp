// WriteRing: many connections' writes for one system call (io_uring).
//
// A live fan-out writes to hundreds of players at the same moment (the end of a write_delay
// hold). One writev per player makes the cost per write mostly syscall entry and exit, which is
// expensive on virtual machines; queueing every player's batch as a sendmsg and submitting them
// together removes that part. The sends stay nonblocking (MSG_DONTWAIT): each completes inside the
// submit call with the bytes the socket took or -EAGAIN, exactly what writev would have returned,
// so the caller's partial-write handling is the same on both paths.
//
// Results are delivered synchronously by submit(), never later: nothing queued outlives the call,
// so a connection's buffers only have to stay put between queue() and the next submit().
// Unavailable (old kernel, io_uring disabled by sysctl or a seccomp policy): open() says why and
// callers write the usual way.
#pragma once

#include <sys/socket.h>
#include <uv.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

struct io_uring;

namespace sluice::server {

// Who gets a queued write's result: the bytes written (>= 0) or a libuv error code (UV_EAGAIN...).
class RingWriteTarget {
 public:
  virtual void on_ring_write(int result) = 0;

 protected:
  ~RingWriteTarget() = default;
};

class WriteRing {
 public:
  WriteRing();
  ~WriteRing();
  WriteRing(const WriteRing&) = delete;
  WriteRing& operator=(const WriteRing&) = delete;

  // Sets up a ring of `entries` submissions (one submit call writes up to that many sockets).
  // False, with the reason in why, when this kernel or its policy does not allow io_uring.
  bool open(unsigned entries, std::string& why);
  bool is_open() const { return ring_ != nullptr; }

  // Queues a nonblocking sendmsg of bufs to fd. The buffers (uv_buf_t has struct iovec's layout)
  // must stay valid until submit(). False when the ring is not open; when it is full, the queued
  // writes are submitted first.
  // made_for_it: the bytes are in a buffer made for this write (TLS ciphertext), which the
  // submit limit below counts; media slices shared by every player are not counted.
  bool queue(int fd, std::span<const uv_buf_t> bufs, RingWriteTarget* target, bool made_for_it = false);
  // The same for a libuv socket's descriptor (false when it has none).
  bool queue(uv_stream_t* stream, std::span<const uv_buf_t> bufs, RingWriteTarget* target, bool made_for_it = false);
  // Submits everything queued and calls each target's on_ring_write before returning. A target
  // may queue again from its callback; that write goes out with the next submit().
  void submit();
  size_t queued() const { return queued_; }
  // Submits what is queued before a write made_for_it would take such queued bytes past `bytes`
  // (0: no limit, only the ring's size). TLS ciphertext is written into its buffer just before it
  // is queued: sent in groups, those buffers are still in the core's cache when the kernel copies
  // them, and they can be used again by the next group (LoopContext's cipher buffers).
  void set_submit_bytes(size_t bytes) { submit_bytes_ = bytes; }

  // Figures for the logs: submit calls and writes sent through the ring.
  uint64_t submits() const { return submits_; }
  uint64_t writes() const { return writes_; }

 private:
  struct Slot {
    RingWriteTarget* target = nullptr;
    bool done = false;
    msghdr msg{};
  };
  struct Result {
    RingWriteTarget* target;
    int value;
  };
  // Results of the first `expected` slots into results_; may_submit allows a cancel request.
  void collect_results(size_t expected, bool may_submit);

  std::unique_ptr<io_uring> ring_;
  std::vector<Slot> slots_;  // one per submission entry; index = user_data
  std::vector<Result> results_;
  size_t queued_ = 0;
  size_t queued_bytes_ = 0;
  size_t submit_bytes_ = 0;
  uint64_t submits_ = 0;
  uint64_t writes_ = 0;
};

}  // namespace sluice::server
