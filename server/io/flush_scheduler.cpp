#include "server/io/flush_scheduler.hpp"

#include "server/io/uv_handle.hpp"

namespace sluice::server {

void FlushScheduler::start(uv_loop_t* loop, uint64_t hold_ms) {
  hold_ms_ = hold_ms;
  uv_check_init(loop, &check_);
  check_.data = this;
  uv_check_start(&check_, [](uv_check_t* h) { owner_of<FlushScheduler>(h)->drain(); });
  uv_timer_init(loop, &hold_timer_);
  hold_timer_.data = this;
  started_ = true;
}

void FlushScheduler::flush_held(Flushable* f) {
  if (hold_ms_ == 0) {
    list_.add(f);
  } else if (list_.add_delayed(f) && !uv_is_active(as_handle(&hold_timer_))) {
    uv_timer_start(&hold_timer_, &FlushScheduler::on_hold_over, hold_ms_, 0);
  }
}

void FlushScheduler::on_hold_over(uv_timer_t* timer) {
  auto* self = owner_of<FlushScheduler>(timer);
  self->list_.promote_delayed();
  self->drain();
}

void FlushScheduler::drain() {
  draining_ = true;
  list_.drain([this] { submit_now(); });
  draining_ = false;
}

void FlushScheduler::close_handles() {
  if (!started_) return;
  close_handle(&check_);
  close_handle(&hold_timer_);
}

}  // namespace sluice::server
