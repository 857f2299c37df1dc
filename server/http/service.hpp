// HttpService: the HTTP side of the server on the server's loop. Owns the HTTP listeners, the set
// of HTTP connections, their per-iteration flush (a uv_check handle, like the RTMP side) and a 1 s
// tick for timeouts. Created and started by Server when config.http.enabled.
//
// Lifecycle:
//  1. start() binds every http.listen address; an error names the address.
//  2. stop() (graceful): closes the listeners, ends HTTP-FLV responses with their last chunk,
//     lets downloads in progress continue, closes idle keep-alive connections.
//  3. close_all() closes whatever is left; close_handles() closes the check and timer handles.
//     The object may be destroyed once the loop has run the close callbacks.
#pragma once

#include <uv.h>

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

#include "config/config.hpp"
#include "base/result.hpp"
#include "server/io/flush_scheduler.hpp"

namespace sluice::server {

class Server;
class HttpConnection;

class HttpService {
 public:
  explicit HttpService(Server& server);
  ~HttpService();
  HttpService(const HttpService&) = delete;
  HttpService& operator=(const HttpService&) = delete;

  Result<void> start();
  void stop();
  void close_all(const std::string& reason);
  void close_handles();

  Server& server() { return server_; }
  bool stopping() const { return stopping_; }
  size_t connection_count() const { return connections_.size(); }
  const std::unordered_set<HttpConnection*>& connections() const { return connections_; }
  // The addresses actually bound (tests listen on port 0).
  const std::vector<std::string>& bound_addresses() const { return bound_; }
  HttpConnection* find(uint64_t id) const;

  void request_flush(HttpConnection* c);
  void request_held_flush(HttpConnection* c);
  // Inside a flush pass: the loop's ring to queue a write on (nullptr: write at once).
  WriteRing* batching_ring() { return flush_.batching_ring(); }
  void cancel_flush(HttpConnection* c);
  void on_connection_closed(HttpConnection* c);

  // One upload at a time per target file: false when another is in progress (409).
  bool claim_upload(const std::string& path) { return uploads_.insert(path).second; }
  void release_upload(const std::string& path) { uploads_.erase(path); }

  // Totals over closed connections, for the stats API.
  uint64_t closed_bytes_in = 0;
  uint64_t closed_bytes_out = 0;
  uint64_t requests = 0;

 private:
  struct Listener {
    uv_tcp_t tcp{};
    HttpService* service = nullptr;
  };
  static void on_connection(uv_stream_t* listener, int status);
  static void on_tick(uv_timer_t* timer);
  Result<void> listen_on(const config::ListenAddress& addr);

  Server& server_;
  std::vector<std::unique_ptr<Listener>> listeners_;
  std::unordered_set<HttpConnection*> connections_;
  FlushScheduler<HttpConnection> flush_;
  uv_timer_t tick_{};
  std::unordered_set<std::string> uploads_;
  bool handles_started_ = false;
  bool stopping_ = false;
  std::vector<std::string> bound_;
};

}  // namespace sluice::server
