// LoopContext: what a socket, a player or a service may ask of the worker loop it runs on, and
// nothing more: the loop and its clock, the settings, the one FlushScheduler (and io_uring ring)
// of the loop, the loop's shared scratch buffers, connection ids.
//
// It is owned by the composition root (server/server.hpp), one per worker loop, and outlives
// every socket of that loop. What lies above io/ (the stream registry, the VOD file cache, the
// stats) is handed to the wings that need it by the root, never reached through this.
#pragma once

#include <uv.h>

#include <cstdint>
#include <mutex>
#include <vector>

#include "base/byte_buffer.hpp"
#include "config/config.hpp"
#include "server/io/flush_scheduler.hpp"
#include "server/io/handshake_gate.hpp"
#include "server/io/write_ring.hpp"

namespace sluice::server {

class LoopContext {
 public:
  LoopContext(uv_loop_t* loop, config::ConfigSnapshot config, uint32_t worker);
  // Unit tests: a view of a Config the test owns (and may change) for the context's whole life.
  LoopContext(uv_loop_t* loop, const config::Config& config, uint32_t worker);
  LoopContext(const LoopContext&) = delete;
  LoopContext& operator=(const LoopContext&) = delete;

  uv_loop_t* loop() const { return loop_; }
  uint64_t now_ms() const { return uv_now(loop_); }
  // The settings now in force. A reference taken from it is good until the callback that took it
  // returns: a reload (set_config) may swap the snapshot between two callbacks.
  const config::Config& config() const { return *config_; }
  const config::ConfigSnapshot& snapshot() const { return config_; }
  // For a thread other than the loop's (libsrt's handshake callback): a hold of its own.
  config::ConfigSnapshot snapshot_from_any_thread() const;
  // A reload, on the loop's thread: new sessions see `next`; what holds an AppRef keeps the old
  // snapshot alive.
  void set_config(config::ConfigSnapshot next);
  // `app` (found in config() during this callback) held beyond it.
  config::AppRef keep(const config::AppConfig& app) const;
  // This loop's index among the workers (0 for a single loop).
  uint32_t worker() const { return worker_; }

  // Starts the flush scheduler and, when rtmp.io_uring asks for it and the kernel allows it,
  // the ring every flush pass submits its writes with.
  void start();
  void close_handles();

  FlushScheduler& flush() { return flush_; }
  HandshakeGate& handshakes() { return handshakes_; }
  uint64_t flush_hold_ms() const { return flush_.hold_ms(); }
  // The ring when io_uring is on, else nullptr.
  WriteRing* ring() { return ring_.is_open() ? &ring_ : nullptr; }

  // One read buffer for the whole loop: reads are handled synchronously, so no socket needs its
  // own (this keeps idle players small).
  uv_buf_t read_buffer();
  // One buffer for the file reads VOD players do on the loop (from the page cache), for the same
  // reason. It is used and done with inside one call.
  std::vector<uint8_t>& file_scratch() { return file_scratch_; }
  // And one for the wire bytes made from them, written to the socket before the call returns.
  std::vector<uint8_t>& wire_scratch() { return wire_scratch_; }

  // Buffers for TLS ciphertext on its way to a socket. A socket takes one when it seals and gives
  // it back once the kernel has taken the bytes, so the few in circulation stay in the cache
  // instead of each player keeping its own (docs/tls.md, "Records"). Large ones (a join's GOP
  // burst) are freed, not kept.
  ByteBuffer take_cipher_buffer();
  void give_cipher_buffer(ByteBuffer& buffer);

  // Connection ids are unique in the process, across RTMP and HTTP and every loop (each loop
  // accepts HTTP connections itself; the stats API names clients by id).
  static uint64_t next_connection_id();

 private:
  uv_loop_t* loop_;
  config::ConfigSnapshot config_;    // written on the loop's thread only, under config_mutex_
  mutable std::mutex config_mutex_;  // for readers on other threads
  uint32_t worker_;
  WriteRing ring_;
  FlushScheduler flush_;
  HandshakeGate handshakes_;
  std::vector<uint8_t> read_buffer_;
  std::vector<uint8_t> file_scratch_;
  std::vector<uint8_t> wire_scratch_;
  std::vector<ByteBuffer> cipher_buffers_;
};

}  // namespace sluice::server
