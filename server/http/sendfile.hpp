// HttpSendfile: sends a byte range of an open file to a connection's socket with sendfile(2), so
// file bytes go from the page cache to the socket without passing through user space.
//
// Why not uv_fs_sendfile: libuv 1.44 (Debian 12) first tries copy_file_range(2), which fails with
// EINVAL on a socket, and then falls back to its read()/write() emulation through an 8 KiB
// user-space buffer, blocking a threadpool thread in poll() while the socket is full. So this class
// calls sendfile(2) itself, on libuv's threadpool (a page-cache miss blocks a pool thread, never
// the loop), on a non-blocking socket: when the socket is full, sendfile returns EAGAIN and the
// pool thread is released at once; a uv_poll_t waits for the socket to become writable.
//
// Rules:
//  1. The socket is a dup() of the connection's descriptor, owned here: a pool thread may still be
//     inside sendfile() when the connection closes its uv_tcp_t, and the number must not be reused
//     by another client meanwhile. (epoll keys registrations by descriptor, so polling the dup for
//     writability does not disturb the uv_tcp_t's own watcher.)
//  2. At most one transfer at a time; the caller must not write to the socket until done() runs.
//  3. close() stops everything; its callback runs once no pool work and no handle refers to this
//     object any more. After close(), done() and progress() are never called.
#pragma once

#include <uv.h>

#include <cstdint>
#include <functional>

namespace sluice::server {

class HttpSendfile {
 public:
  using Progress = std::function<void(uint64_t bytes)>;
  using Done = std::function<void(int status)>;  // 0, or a negative libuv error code

  explicit HttpSendfile(uv_loop_t* loop) : loop_(loop) {}
  ~HttpSendfile() = default;
  HttpSendfile(const HttpSendfile&) = delete;
  HttpSendfile& operator=(const HttpSendfile&) = delete;

  // Sends [offset, offset + length) of file_fd to the socket (the connection's descriptor; it is
  // duplicated on first use). Returns a libuv error code when it cannot start (done() is then not
  // called, libuv's rule).
  int start(uv_os_fd_t socket_fd, uv_file file_fd, uint64_t offset, uint64_t length, Progress progress, Done done);
  bool active() const { return active_; }
  void close(std::function<void()> closed);

 private:
  static void work(uv_work_t* req);
  static void after_work(uv_work_t* req, int status);
  static void on_writable(uv_poll_t* handle, int status, int events);
  void queue_work();
  void finish(int status);
  void maybe_closed();

  uv_loop_t* loop_;
  uv_work_t work_req_{};
  uv_poll_t poll_{};
  int socket_ = -1;
  bool poll_initialized_ = false;
  bool poll_closed_ = false;
  bool work_running_ = false;
  bool active_ = false;
  bool closing_ = false;
  std::function<void()> closed_;
  Progress progress_;
  Done done_;
  // Transfer state; the pool thread reads file_fd_/offset_/remaining_ and writes the results.
  uv_file file_fd_ = -1;
  uint64_t offset_ = 0;
  uint64_t remaining_ = 0;
  uint64_t sent_ = 0;
  int error_ = 0;
  bool would_block_ = false;
};

}  // namespace sluice::server
