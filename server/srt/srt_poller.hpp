// SrtPoller: the readiness of one loop's SRT sockets, handed to that loop (docs/srt.md, "How it
// runs"). libsrt runs threads of its own and has its own epoll, with no descriptor libuv could
// watch: a thread of ours waits in srt_epoll_uwait on this loop's sockets and posts what became
// ready through a uv_async. The loop then accepts, reads and writes itself (libsrt's calls are
// thread-safe), so no media byte crosses a thread through us, and the players' path takes no
// lock of ours (only these readiness notes do, a batch per wake-up).
//
// Sockets are watched edge-triggered: an event says a socket became readable or writable, and the
// loop reads (or writes, or accepts) until libsrt says it would block; an error or a closed peer
// is reported as SRT_EPOLL_ERR. on_ready runs on the loop, never inside libsrt.
#pragma once

#include <srt/srt.h>
#include <uv.h>

#include <atomic>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "base/result.hpp"

namespace sluice::server {

class SrtPoller {
 public:
  struct Ready {
    SRTSOCKET socket = SRT_INVALID_SOCK;
    int events = 0;  // SRT_EPOLL_IN, SRT_EPOLL_OUT, SRT_EPOLL_ERR
  };
  using OnReady = std::function<void(const Ready&)>;

  SrtPoller(uv_loop_t* loop, OnReady on_ready);
  ~SrtPoller();
  SrtPoller(const SrtPoller&) = delete;
  SrtPoller& operator=(const SrtPoller&) = delete;

  // libsrt's start (counted: every poller calls it, and its stop the matching cleanup), the epoll,
  // the async and the thread.
  Result<void> start();
  // Watches `s` for `events` (SRT_EPOLL_IN / OUT / ERR), edge-triggered; again to change them.
  bool watch(SRTSOCKET s, int events);
  // Before closing a socket the loop still holds (srt_close also removes it).
  void unwatch(SRTSOCKET s);
  // Ends the thread (it wakes at least every 100 ms) and closes the async: the loop must run once
  // more for that close. Notes not yet handed over are dropped.
  void stop();

 private:
  void run();
  static void on_async(uv_async_t* async);

  uv_loop_t* loop_;
  OnReady on_ready_;
  int eid_ = -1;
  uv_async_t async_{};
  bool started_ = false;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
  std::mutex mutex_;
  std::vector<Ready> pending_;  // filled by the thread, taken by the loop
  std::vector<Ready> taking_;   // the loop's batch
};

}  // namespace sluice::server
