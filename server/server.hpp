// Server: one worker loop's owner. The set of connections, the stream registry, the flush of
// connections with pending output, the housekeeping tick. Worker 0 also owns the listeners, the
// HTTP side and the signals; with several workers (WorkerMesh) it hands every other accepted
// RTMP connection to the next worker in turn.
#pragma once

#include <uv.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

#include "config/config.hpp"
#include "base/result.hpp"
#include "server/io/flush_scheduler.hpp"
#include "server/live/stream_registry.hpp"
#include "server/vod/files.hpp"
#include "server/live/worker_mesh.hpp"
#include "server/io/write_ring.hpp"

namespace sluice::server {

class RtmpConnection;
class HttpService;

class Server {
 public:
  // mesh is nullptr for a single loop; worker is this loop's index in the mesh.
  Server(uv_loop_t* loop, config::Config config, WorkerMesh* mesh = nullptr, uint32_t worker = 0);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds every listener and starts the timers; fails with the address that could not be bound.
  Result<void> start();
  // Graceful stop (SIGINT/SIGTERM): stop accepting, end streams, close connections, let the loop end.
  void stop();

  const config::Config& config() const { return config_; }
  StreamRegistry& registry() { return registry_; }
  VodFiles& vod_files() { return vod_files_; }
  uv_loop_t* loop() { return loop_; }
  uint64_t now_ms() const { return uv_now(loop_); }

  // Output is written at the end of this loop iteration (flush soon) or, for live media, within
  // rtmp.player_queue.write_delay (flush held).
  void request_flush(RtmpConnection* c);
  void request_held_flush(RtmpConnection* c);
  void cancel_flush(RtmpConnection* c);
  // Inside a flush pass with io_uring: the ring a connection queues its write on (nullptr: write
  // at once). submit_writes() sends what is queued now (a connection closing mid-pass).
  WriteRing* batching_ring();
  // The loop's ring when io_uring is on (the HTTP side shares it), else nullptr.
  WriteRing* write_ring() { return ring_.is_open() ? &ring_ : nullptr; }
  void submit_writes();
  void on_connection_closed(RtmpConnection* c);
  // One read buffer for the whole loop: reads are handled synchronously, so no connection needs
  // its own (this keeps idle players small).
  uv_buf_t read_buffer();
  // One buffer for the file reads VOD players do on the loop (from the page cache), for the same
  // reason. It is used and done with inside one call.
  std::vector<uint8_t>& file_scratch() { return file_scratch_; }
  // And one for the wire bytes made from them, written to the socket before the call returns.
  std::vector<uint8_t>& wire_scratch() { return wire_scratch_; }
  // The ports actually bound (tests listen on port 0).
  const std::vector<std::string>& bound_addresses() const { return bound_; }
  // RTMP connections of every worker.
  size_t connection_count() const { return mesh_ ? mesh_->rtmp_connections.load() : connections_.size(); }
  WorkerMesh* mesh() { return mesh_; }
  uint32_t worker() const { return worker_; }
  // After the loop ended (all workers joined): closes the mesh wake-up handle.
  void close_mesh_handle();
  // The HTTP side (nullptr when http.enabled is false); its connections count against
  // rtmp.max_connections together with the RTMP ones.
  HttpService* http() { return http_.get(); }
  size_t http_connection_count() const;
  // RtmpConnection ids are unique across RTMP and HTTP.
  uint64_t next_connection_id() { return next_connection_id_++; }
  // For the stats API: the RTMP connections, and when start() ran (loop time, ms).
  const std::unordered_set<RtmpConnection*>& connections() const { return connections_; }
  uint64_t started_ms() const { return started_ms_; }

 private:
  struct Listener {
    uv_tcp_t tcp{};
    Server* server = nullptr;
  };
  static void on_connection(uv_stream_t* listener, int status);
  static void on_tick(uv_timer_t* timer);
  static void on_signal(uv_signal_t* signal, int signum);
  static void on_wake(uv_async_t* async);
  void on_mesh_event(MeshEvent& e);
  void adopt(int fd, uint64_t id);
  bool hand_over(uv_stream_t* listener);
  void publish_snapshot();
  Result<void> listen_on(const config::ListenAddress& addr);
  void close_handles();

  uv_loop_t* loop_;
  config::Config config_;
  StreamRegistry registry_;
  VodFiles vod_files_;
  std::vector<std::unique_ptr<Listener>> listeners_;
  std::unique_ptr<HttpService> http_;
  std::unordered_set<RtmpConnection*> connections_;
  WriteRing ring_;
  FlushScheduler<RtmpConnection> flush_;
  uv_timer_t tick_{};
  uv_timer_t stop_timer_{};
  uv_async_t wake_{};
  uv_timer_t snapshot_timer_{};
  std::array<uv_signal_t, 2> signals_{};
  std::vector<uint8_t> read_buffer_;
  std::vector<uint8_t> file_scratch_;
  std::vector<uint8_t> wire_scratch_;
  WorkerMesh* mesh_ = nullptr;
  uint32_t worker_ = 0;
  uint32_t next_worker_ = 0;
  std::vector<std::string> bound_;
  uint64_t next_connection_id_ = 1;
  uint64_t started_ms_ = 0;
  bool stopping_ = false;
};

}  // namespace sluice::server
