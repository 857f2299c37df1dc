#include "media/vod/pacer.hpp"

#include <algorithm>

namespace sluice::media::vod {

uint32_t VodPacer::lead_ms() const {
  return buffer_ms_ == 0 ? kDefaultLeadMs : std::clamp(buffer_ms_, kMinLeadMs, kMaxLeadMs);
}

uint64_t VodPacer::media_clock(uint64_t now_ms) const {
  uint64_t now = paused_ ? paused_at_wall_ : now_ms;
  return start_media_ms_ + (now - start_wall_ms_);
}

uint32_t VodPacer::start(const MediaIndex& index, double start_ms, double duration_ms, uint64_t now_ms) {
  index_ = &index;
  uint32_t first = start_ms > 0 ? index.seek(static_cast<uint32_t>(start_ms)) : 0;
  end_ms_ = duration_ms >= 0 ? static_cast<uint32_t>(std::max(0.0, start_ms) + duration_ms) : UINT32_MAX;
  restart_at(first, now_ms);
  return first;
}

uint32_t VodPacer::seek(double ms, uint64_t now_ms) {
  uint32_t sample = index_->seek(ms > 0 ? static_cast<uint32_t>(ms) : 0);
  paused_ = false;
  restart_at(sample, now_ms);
  return sample;
}

void VodPacer::restart_at(uint32_t sample, uint64_t now_ms) {
  const auto& samples = index_->samples;
  next_ = sample;
  end_ = static_cast<uint32_t>(samples.size());
  start_media_ms_ = next_ < end_ ? samples[next_].dts_ms : 0;
  start_wall_ms_ = now_ms;
}

void VodPacer::stop() {
  index_ = nullptr;
  paused_ = false;
}

void VodPacer::pause(uint64_t now_ms) {
  if (paused_) return;
  paused_ = true;
  paused_at_wall_ = now_ms;
}

void VodPacer::resume(uint64_t now_ms) {
  if (!paused_) return;
  start_wall_ms_ += now_ms - paused_at_wall_;
  paused_ = false;
}

PaceDecision VodPacer::next(uint64_t now_ms, size_t pending_bytes) const {
  using Kind = PaceDecision::Kind;
  if (index_ == nullptr || paused_) return {Kind::Idle, {}, 0};
  const auto& samples = index_->samples;
  if (next_ >= end_ || samples[next_].dts_ms >= end_ms_) return {Kind::Finished, {}, 0};
  if (pending_bytes > kMaxPendingBytes) return {Kind::Blocked, {}, 0};
  // Refill in steps of about a second of media, not one frame at a time.
  const uint64_t lead = lead_ms();
  const uint64_t horizon = media_clock(now_ms) + lead;
  const uint64_t low_water = horizon - std::min<uint64_t>(lead / 2, kRefillStepMs);
  const uint32_t first_dts = samples[next_].dts_ms;
  if (first_dts > low_water) {
    return {Kind::Wait, {}, now_ms + std::clamp<uint64_t>(first_dts - low_water, 1, kMaxWakeMs)};
  }
  if (burst_bytes_ >= kMaxBurstBytes) return {Kind::Yield, {}, now_ms + 1};
  uint32_t last = next_;
  while (last < end_ && samples[last].dts_ms <= horizon && samples[last].dts_ms < end_ms_) ++last;
  return {Kind::Read, index_->plan_read(next_, last, kReadBudget), 0};
}

void VodPacer::sent(const ReadPlan& plan, bool read_on_loop) {
  next_ = plan.end;
  if (read_on_loop) burst_bytes_ += plan.bytes.size;
}

}  // namespace sluice::media::vod
