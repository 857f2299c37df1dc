// FlushScheduler: when connections with output get flushed. Control replies and anything urgent
// go out at the end of the loop iteration (a uv_check handle); live media may be held up to a
// bound (a one-shot uv_timer started by the first held connection) so that each player gets a
// few larger writes instead of one per message. See FlushList for the bookkeeping.
#pragma once

#include <uv.h>

#include <cstdint>

#include "server/io/flush_list.hpp"
#include "server/io/write_ring.hpp"

namespace sluice::server {

template <typename T>
class FlushScheduler {
 public:
  // hold_ms = 0 turns holding off: held output is flushed at the end of the iteration too.
  void start(uv_loop_t* loop, uint64_t hold_ms) {
    hold_ms_ = hold_ms;
    uv_check_init(loop, &check_);
    check_.data = this;
    uv_check_start(&check_, [](uv_check_t* h) { static_cast<FlushScheduler*>(h->data)->drain(); });
    uv_timer_init(loop, &hold_timer_);
    hold_timer_.data = this;
    started_ = true;
  }

  void flush_soon(T* c) { list_.add(c); }

  void flush_held(T* c) {
    if (hold_ms_ == 0) {
      list_.add(c);
    } else if (list_.add_delayed(c) && !uv_is_active(reinterpret_cast<uv_handle_t*>(&hold_timer_))) {
      uv_timer_start(&hold_timer_, &FlushScheduler::on_hold_over, hold_ms_, 0);
    }
  }

  void cancel(T* c) { list_.remove(c); }

  // With a ring, the connections flushed in one pass of a drain queue their writes on it and the
  // pass ends with one submit for all of them (see WriteRing).
  void use_ring(WriteRing* ring) { ring_ = ring; }
  // The ring to queue a write on: only inside a drain, whose pass end submits it.
  WriteRing* batching_ring() const { return draining_ ? ring_ : nullptr; }

  void close_handles() {
    if (!started_) return;
    for (auto* h : {reinterpret_cast<uv_handle_t*>(&check_), reinterpret_cast<uv_handle_t*>(&hold_timer_)}) {
      if (!uv_is_closing(h)) uv_close(h, nullptr);
    }
  }

 private:
  static void on_hold_over(uv_timer_t* timer) {
    auto* self = static_cast<FlushScheduler*>(timer->data);
    self->list_.promote_delayed();
    self->drain();
  }

  void drain() {
    draining_ = true;
    list_.drain([this] {
      if (ring_ != nullptr) ring_->submit();
    });
    draining_ = false;
  }

  FlushList<T> list_;
  uv_check_t check_{};
  uv_timer_t hold_timer_{};
  uint64_t hold_ms_ = 0;
  WriteRing* ring_ = nullptr;
  bool draining_ = false;
  bool started_ = false;
};

}  // namespace sluice::server
