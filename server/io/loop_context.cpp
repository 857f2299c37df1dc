#include "server/io/loop_context.hpp"

#include <atomic>
#include <functional>
#include <string>

#include "server/io/logging.hpp"

namespace sluice::server {

namespace {
constexpr size_t kReadBufferSize = 64 * 1024;
// Writes per io_uring submit call: a flush pass with more players submits in several calls.
constexpr unsigned kRingEntries = 1024;
// TLS ciphertext queued on the ring between two submits: well inside a core's L2 cache, so the
// kernel copies it out of the cache it was just written to (docs/tls.md, "Records").
constexpr size_t kRingSubmitBytes = 256 * 1024;
// Cipher buffers kept for reuse, and the largest kept: a flush pass's groups take a handful; a
// 100 ms batch of a few Mb/s is tens of KiB.
constexpr size_t kCipherBuffersKept = 32;
constexpr size_t kCipherBufferKeptCapacity = 256 * 1024;
}  // namespace

ByteBuffer LoopContext::take_cipher_buffer() {
  if (cipher_buffers_.empty()) return {};
  ByteBuffer b = std::move(cipher_buffers_.back());
  cipher_buffers_.pop_back();
  return b;
}

void LoopContext::give_cipher_buffer(ByteBuffer& buffer) {
  ByteBuffer b;
  b.swap(buffer);
  if (b.capacity() == 0 || b.capacity() > kCipherBufferKeptCapacity || cipher_buffers_.size() >= kCipherBuffersKept) {
    return;
  }
  b.clear();
  cipher_buffers_.push_back(std::move(b));
}

uint64_t LoopContext::next_connection_id() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

LoopContext::LoopContext(uv_loop_t* loop, config::ConfigSnapshot config, uint32_t worker)
    : loop_(loop), config_(std::move(config)), worker_(worker), read_buffer_(kReadBufferSize) {}

// A pointer that owns nothing: the test keeps `config` alive and may change it.
LoopContext::LoopContext(uv_loop_t* loop, const config::Config& config, uint32_t worker)
    : LoopContext(loop, config::ConfigSnapshot(std::shared_ptr<void>(), &config), worker) {}

config::ConfigSnapshot LoopContext::snapshot_from_any_thread() const {
  std::lock_guard<std::mutex> lock(config_mutex_);
  return config_;
}

void LoopContext::set_config(config::ConfigSnapshot next) {
  std::lock_guard<std::mutex> lock(config_mutex_);
  config_ = std::move(next);
  handshakes_.set_per_iteration(config_->rtmp.limits.accepts_per_iteration);
}

config::AppRef LoopContext::keep(const config::AppConfig& app) const {
  const auto& apps = config_->apps;
  const std::less<const config::AppConfig*> before;  // an order for pointers into any object
  if (!apps.empty() && !before(&app, apps.data()) && before(&app, apps.data() + apps.size())) return {config_, &app};
  // Not of this snapshot (one held from before a reload): a copy is as good and owns itself.
  return std::make_shared<const config::AppConfig>(app);
}

void LoopContext::start() {
  handshakes_.start(loop_, config_->rtmp.limits.accepts_per_iteration);
  const config::PlayerQueueConfig& q = config_->rtmp.player_queue;
  flush_.start(loop_, WriteHold(static_cast<uint64_t>(q.write_delay.count()), q.write_budget, q.write_budget_players),
               q.write_lanes);
  if (!config_->rtmp.io_uring) return;
  std::string why;
  if (ring_.open(kRingEntries, why)) {
    ring_.set_submit_bytes(kRingSubmitBytes);
    flush_.use_ring(&ring_);
    SLUICE_LOG_INFO("worker={} event=io_uring state=on entries={}", worker_, kRingEntries);
  } else {
    SLUICE_LOG_WARN("worker={} event=io_uring state=off reason=\"{}\" (players are written one writev each)", worker_,
                    why);
  }
}

void LoopContext::close_handles() {
  flush_.close_handles();
  handshakes_.close_handles();
  if (ring_.is_open()) {
    SLUICE_LOG_INFO("worker={} event=io_uring_stats submits={} writes={}", worker_, ring_.submits(), ring_.writes());
  }
}

uv_buf_t LoopContext::read_buffer() {
  return uv_buf_init(reinterpret_cast<char*>(read_buffer_.data()), static_cast<unsigned>(read_buffer_.size()));
}

}  // namespace sluice::server
