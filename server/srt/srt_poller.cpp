#include "server/srt/srt_poller.hpp"

#include <chrono>
#include <string>
#include <utility>

#include "server/io/uv_handle.hpp"

namespace sluice::server {

namespace {
constexpr int kWaitMs = 100;  // how soon a stop is seen
constexpr int kBatch = 256;   // sockets per wake-up
// After a wake-up of the loop, what becomes ready in the next few ms waits and goes in one: each
// packet woke the loop (an eventfd write and read, a futex, a context switch) and read one or two
// messages, most of Sluice's part of SRT ingest's CPU (docs/benchmarks.md, "SRT against RTMP").
// A few ms are nothing against SRT's latency (120 ms by default).
constexpr auto kGatherFor = std::chrono::milliseconds(3);
}  // namespace

SrtPoller::SrtPoller(uv_loop_t* loop, OnReady on_ready) : loop_(loop), on_ready_(std::move(on_ready)) {}

SrtPoller::~SrtPoller() { stop(); }

Result<void> SrtPoller::start() {
  if (srt_startup() < 0) return Error(Errc::Io, std::string("srt_startup: ") + srt_getlasterror_str());
  eid_ = srt_epoll_create();
  if (eid_ < 0) {
    srt_cleanup();
    return Error(Errc::Io, std::string("srt_epoll_create: ") + srt_getlasterror_str());
  }
  // An epoll with no socket yet waits instead of failing.
  srt_epoll_set(eid_, SRT_EPOLL_ENABLE_EMPTY);
  uv_async_init(loop_, &async_, &SrtPoller::on_async);
  async_.data = this;
  started_ = true;
  thread_ = std::thread([this] { run(); });
  return {};
}

bool SrtPoller::watch(SRTSOCKET s, int events) {
  const int flags = events | SRT_EPOLL_ET;
  if (srt_epoll_update_usock(eid_, s, &flags) == 0) return true;
  return srt_epoll_add_usock(eid_, s, &flags) == 0;
}

void SrtPoller::unwatch(SRTSOCKET s) { srt_epoll_remove_usock(eid_, s); }

void SrtPoller::stop() {
  if (!started_) return;
  started_ = false;
  stopping_.store(true, std::memory_order_relaxed);
  if (thread_.joinable()) thread_.join();
  srt_epoll_release(eid_);
  eid_ = -1;
  close_handle(&async_);
  srt_cleanup();
}

// The thread: waits, notes what became ready, wakes the loop.
void SrtPoller::run() {
  std::vector<SRT_EPOLL_EVENT> ready(kBatch);
  while (!stopping_.load(std::memory_order_relaxed)) {
    const int n = srt_epoll_uwait(eid_, ready.data(), kBatch, kWaitMs);
    if (n <= 0) continue;  // the wait ended without news (or the epoll is being released)
    {
      std::lock_guard<std::mutex> lock(mutex_);
      for (int i = 0; i < n; ++i) pending_.push_back({ready[i].fd, ready[i].events});
    }
    uv_async_send(&async_);
    std::this_thread::sleep_for(kGatherFor);
  }
}

void SrtPoller::on_async(uv_async_t* async) {
  auto* self = static_cast<SrtPoller*>(async->data);
  {
    std::lock_guard<std::mutex> lock(self->mutex_);
    self->taking_.swap(self->pending_);
  }
  for (const Ready& r : self->taking_) {
    if (!self->started_) break;  // stopped from inside on_ready
    self->on_ready_(r);
  }
  self->taking_.clear();
}

}  // namespace sluice::server
