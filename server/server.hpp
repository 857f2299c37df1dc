// Server: the libuv loop's owner. Listeners, the set of connections, the stream registry, the
// per-iteration flush of connections with pending output, the housekeeping tick and signals.
#pragma once

#include <uv.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

#include "config/config.hpp"
#include "protocol/result.hpp"
#include "server/flush_list.hpp"
#include "server/stream_registry.hpp"
#include "server/vod_files.hpp"

namespace sluice::server {

class Connection;
class HttpService;

class Server {
 public:
  Server(uv_loop_t* loop, config::Config config);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds every listener and starts the timers; fails with the address that could not be bound.
  protocol::Result<void> start();
  // Graceful stop (SIGINT/SIGTERM): stop accepting, end streams, close connections, let the loop end.
  void stop();

  const config::Config& config() const { return config_; }
  StreamRegistry& registry() { return registry_; }
  VodFiles& vod_files() { return vod_files_; }
  uv_loop_t* loop() { return loop_; }
  uint64_t now_ms() const { return uv_now(loop_); }

  void request_flush(Connection* c);
  void cancel_flush(Connection* c);
  void on_connection_closed(Connection* c);
  // One read buffer for the whole loop: reads are handled synchronously, so no connection needs
  // its own (this keeps idle players small).
  uv_buf_t read_buffer();
  // The ports actually bound (tests listen on port 0).
  const std::vector<std::string>& bound_addresses() const { return bound_; }
  size_t connection_count() const { return connections_.size(); }
  // The HTTP side (nullptr when http.enabled is false); its connections count against
  // rtmp.max_connections together with the RTMP ones.
  HttpService* http() { return http_.get(); }
  size_t http_connection_count() const;
  // Connection ids are unique across RTMP and HTTP.
  uint64_t next_connection_id() { return next_connection_id_++; }
  // For the stats API: the RTMP connections, and when start() ran (loop time, ms).
  const std::unordered_set<Connection*>& connections() const { return connections_; }
  uint64_t started_ms() const { return started_ms_; }

 private:
  struct Listener {
    uv_tcp_t tcp{};
    Server* server = nullptr;
  };
  static void on_connection(uv_stream_t* listener, int status);
  static void on_check(uv_check_t* check);
  static void on_tick(uv_timer_t* timer);
  static void on_signal(uv_signal_t* signal, int signum);
  void flush_pending();
  protocol::Result<void> listen_on(const config::ListenAddress& addr);
  void close_handles();

  uv_loop_t* loop_;
  config::Config config_;
  StreamRegistry registry_;
  VodFiles vod_files_;
  std::vector<std::unique_ptr<Listener>> listeners_;
  std::unique_ptr<HttpService> http_;
  std::unordered_set<Connection*> connections_;
  FlushList<Connection> flush_list_;
  uv_check_t check_{};
  uv_timer_t tick_{};
  uv_timer_t stop_timer_{};
  std::array<uv_signal_t, 2> signals_{};
  std::vector<uint8_t> read_buffer_;
  std::vector<std::string> bound_;
  uint64_t next_connection_id_ = 1;
  uint64_t started_ms_ = 0;
  bool stopping_ = false;
};

}  // namespace sluice::server
