#include "server/io/flush_scheduler.hpp"

#include "server/io/uv_handle.hpp"

namespace sluice::server {

void FlushScheduler::start(uv_loop_t* loop, WriteHold hold) {
  hold_ = hold;
  uv_check_init(loop, &check_);
  check_.data = this;
  uv_check_start(&check_, [](uv_check_t* h) { owner_of<FlushScheduler>(h)->drain(); });
  uv_idle_init(loop, &idle_);
  idle_.data = this;
  uv_timer_init(loop, &hold_timer_);
  hold_timer_.data = this;
  started_ = true;
}

void FlushScheduler::flush_held(Flushable* f) {
  if (!f->in_flush_list && !f->in_delayed_list) ++period_sockets_;
  if (hold_.hold_ms() == 0) {
    flush_soon(f);
  } else if (list_.add_delayed(f) && !uv_is_active(as_handle(&hold_timer_))) {
    uv_timer_start(&hold_timer_, &FlushScheduler::on_hold_over, hold_.hold_ms(), 0);
  }
}

void FlushScheduler::keep_awake() {
  if (started_ && !uv_is_active(as_handle(&idle_))) uv_idle_start(&idle_, [](uv_idle_t*) {});
}

void FlushScheduler::on_hold_over(uv_timer_t* timer) {
  auto* self = owner_of<FlushScheduler>(timer);
  self->end_period();
  self->list_.promote_delayed();
  self->drain();
}

void FlushScheduler::end_period() {
  hold_.period_ended(period_sockets_);
  period_sockets_ = 0;
}

void FlushScheduler::drain() {
  // Without a hold, every iteration that wrote held media is a period of its own.
  if (period_sockets_ != 0 && hold_.hold_ms() == 0) end_period();
  draining_ = true;
  list_.drain([this] { submit_now(); });
  draining_ = false;
  if (uv_is_active(as_handle(&idle_))) uv_idle_stop(&idle_);
}

void FlushScheduler::close_handles() {
  if (!started_) return;
  close_handle(&check_);
  close_handle(&idle_);
  close_handle(&hold_timer_);
}

}  // namespace sluice::server
