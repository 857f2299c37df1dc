#include "server/io/loop_context.hpp"

#include <atomic>
#include <string>

#include "server/io/logging.hpp"

namespace sluice::server {

namespace {
constexpr size_t kReadBufferSize = 64 * 1024;
// Writes per io_uring submit call: a flush pass with more players submits in several calls.
constexpr unsigned kRingEntries = 1024;
}  // namespace

uint64_t LoopContext::next_connection_id() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

LoopContext::LoopContext(uv_loop_t* loop, const config::Config& config, uint32_t worker)
    : loop_(loop), config_(config), worker_(worker), read_buffer_(kReadBufferSize) {}

void LoopContext::start() {
  const config::PlayerQueueConfig& q = config_.rtmp.player_queue;
  flush_.start(loop_, WriteHold(static_cast<uint64_t>(q.write_delay.count()), q.write_budget, q.write_budget_players),
               q.write_lanes);
  if (!config_.rtmp.io_uring) return;
  std::string why;
  if (ring_.open(kRingEntries, why)) {
    flush_.use_ring(&ring_);
    SLUICE_LOG_INFO("worker={} event=io_uring state=on entries={}", worker_, kRingEntries);
  } else {
    SLUICE_LOG_WARN("worker={} event=io_uring state=off reason=\"{}\" (players are written one writev each)", worker_,
                    why);
  }
}

void LoopContext::close_handles() {
  flush_.close_handles();
  if (ring_.is_open()) {
    SLUICE_LOG_INFO("worker={} event=io_uring_stats submits={} writes={}", worker_, ring_.submits(), ring_.writes());
  }
}

uv_buf_t LoopContext::read_buffer() {
  return uv_buf_init(reinterpret_cast<char*>(read_buffer_.data()), static_cast<unsigned>(read_buffer_.size()));
}

}  // namespace sluice::server
