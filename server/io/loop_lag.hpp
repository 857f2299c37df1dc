// LoopLag: how late a loop runs its timers, the figure that shows a loop blocked by work done on
// it (a disk write, a big parse). A 50 ms timer notes how much later than due it fired; the last
// minute of those delays gives the quantiles /metrics reports (sluice_loop_lag_seconds).
#pragma once

#include <uv.h>

#include <array>
#include <cstdint>

namespace sluice::server {

class LoopLag {
 public:
  static constexpr uint64_t kIntervalMs = 50;
  static constexpr size_t kWindow = 60'000 / kIntervalMs;  // a minute of samples

  void start(uv_loop_t* loop);
  void close();

  // Of the samples in the window, in seconds: q in [0, 1] (0.5 the median, 1 the maximum).
  double quantile_seconds(double q) const;
  uint64_t samples() const { return count_; }

 private:
  static void on_timer(uv_timer_t* t);

  uv_timer_t timer_{};
  bool started_ = false;
  bool running_ = false;  // the first firing came (the server's start is over)
  uint64_t due_ns_ = 0;
  std::array<uint32_t, kWindow> lag_us_{};
  uint64_t count_ = 0;  // samples ever taken; the window holds the last min(count_, kWindow)
};

}  // namespace sluice::server
