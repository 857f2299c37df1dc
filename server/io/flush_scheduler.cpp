#include "server/io/flush_scheduler.hpp"

#include <algorithm>

#include "server/io/uv_handle.hpp"

namespace sluice::server {

void FlushScheduler::start(uv_loop_t* loop, WriteHold hold, size_t max_lanes) {
  hold_ = hold;
  max_lanes_ = std::max<size_t>(max_lanes, 1);
  uv_check_init(loop, &check_);
  check_.data = this;
  uv_check_start(&check_, [](uv_check_t* h) { owner_of<FlushScheduler>(h)->drain(); });
  uv_idle_init(loop, &idle_);
  idle_.data = this;
  uv_timer_init(loop, &hold_timer_);
  hold_timer_.data = this;
  started_ = true;
}

size_t FlushScheduler::lanes_for(size_t sockets, uint64_t hold_ms, size_t max_lanes) {
  const size_t by_sockets = std::max<size_t>(sockets / kSocketsPerLane, 1);
  const size_t by_time = std::max<size_t>(static_cast<size_t>(hold_ms / kMinLaneMs), 1);
  return std::min({by_sockets, by_time, std::max<size_t>(max_lanes, 1)});
}

size_t FlushScheduler::next_lanes(size_t sockets) const {
  const size_t wanted = lanes_for(sockets, hold_.hold_ms(), max_lanes_);
  const size_t now = list_.lanes();
  if (wanted >= now) return wanted;
  // Fewer lanes only when clearly below the step: a count that wanders around it must not move
  // the players between lanes every period (each move writes all of them at once).
  return std::min(now, lanes_for(sockets + sockets / 9, hold_.hold_ms(), max_lanes_));
}

void FlushScheduler::flush_held(Flushable* f) {
  // Counted when given media, not when written: a socket written early (a burst) still counts.
  if (!f->in_flush_list && !f->in_delayed_list) ++period_sockets_;
  if (hold_.hold_ms() == 0) {
    flush_soon(f);
  } else if (list_.add_delayed(f) && !uv_is_active(as_handle(&hold_timer_))) {
    arm_lane_timer();
  }
}

void FlushScheduler::keep_awake() {
  if (started_ && !uv_is_active(as_handle(&idle_))) uv_idle_start(&idle_, [](uv_idle_t*) {});
}

// Lane i of n ends at hold x (i + 1) / n into the period: the lanes' lengths add up to the hold.
void FlushScheduler::arm_lane_timer() {
  const uint64_t hold = hold_.hold_ms();
  const uint64_t n = list_.lanes();
  const uint64_t ms = hold * (lane_ + 1) / n - hold * lane_ / n;
  uv_timer_start(&hold_timer_, &FlushScheduler::on_hold_over, std::max<uint64_t>(ms, 1), 0);
}

void FlushScheduler::on_hold_over(uv_timer_t* timer) { owner_of<FlushScheduler>(timer)->hold_lane_over(); }

void FlushScheduler::hold_lane_over() {
  list_.promote_delayed(lane_);
  if (++lane_ >= list_.lanes()) {
    lane_ = 0;
    end_period();  // may let everything held go too: one drain writes it all
  }
  drain();
  if (hold_.hold_ms() != 0 && list_.has_delayed()) arm_lane_timer();
}

void FlushScheduler::end_period() {
  const size_t sockets = period_sockets_;
  period_sockets_ = 0;
  hold_.period_ended(sockets);
  const size_t lanes = hold_.hold_ms() == 0 ? 1 : next_lanes(sockets);
  // With no hold any more nothing may wait; with other lanes a held socket could land in a lane
  // whose turn is nearly a whole hold away, so everything held goes out now instead.
  if (hold_.hold_ms() == 0 || lanes != list_.lanes()) {
    list_.promote_delayed();
    list_.set_lanes(lanes);
    lane_ = 0;  // a new grid starts with its first lane
  }
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
