#include "server/io/loop_lag.hpp"

#include <algorithm>
#include <vector>

namespace sluice::server {

void LoopLag::start(uv_loop_t* loop) {
  if (started_) return;
  started_ = true;
  uv_timer_init(loop, &timer_);
  timer_.data = this;
  // Not a reason to keep a stopping loop alive.
  uv_unref(reinterpret_cast<uv_handle_t*>(&timer_));
  due_ns_ = uv_hrtime() + kIntervalMs * 1'000'000;
  uv_timer_start(&timer_, &LoopLag::on_timer, kIntervalMs, kIntervalMs);
}

void LoopLag::close() {
  if (!started_) return;
  started_ = false;
  uv_close(reinterpret_cast<uv_handle_t*>(&timer_), nullptr);
}

void LoopLag::on_timer(uv_timer_t* t) {
  auto* self = static_cast<LoopLag*>(t->data);
  const uint64_t now = uv_hrtime();
  if (!self->running_) {
    // The first firing ends the start: the timer was set before the server's listeners, TLS
    // contexts and other loops were made, which is set-up, not a loop held by work.
    self->running_ = true;
    self->due_ns_ = now + kIntervalMs * 1'000'000;
    return;
  }
  const uint64_t late_ns = now > self->due_ns_ ? now - self->due_ns_ : 0;
  self->lag_us_[self->count_ % kWindow] = static_cast<uint32_t>(std::min<uint64_t>(late_ns / 1000, UINT32_MAX));
  ++self->count_;
  // The next one is due an interval after this one fired (libuv repeats from the callback).
  self->due_ns_ = now + kIntervalMs * 1'000'000;
}

double LoopLag::quantile_seconds(double q) const {
  const size_t n = static_cast<size_t>(std::min<uint64_t>(count_, kWindow));
  if (n == 0) return 0;
  std::vector<uint32_t> v(lag_us_.begin(), lag_us_.begin() + static_cast<std::ptrdiff_t>(n));
  const size_t k = std::min(n - 1, static_cast<size_t>(q * static_cast<double>(n - 1) + 0.5));
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
  return v[k] / 1e6;
}

}  // namespace sluice::server
