// HttpService: the HTTP side of a worker loop. Owns the HTTP listeners, the set of HTTP
// connections and a 1 s tick for their timeouts; their writes go through the loop's one
// FlushScheduler like every other socket's. Created and started by the composition root
// (server/server.cpp) when config.http.enabled.
//
// Lifecycle:
//  1. start() binds every http.listen address; an error names the address.
//  2. stop() (graceful): closes the listeners, ends HTTP-FLV responses with their last chunk,
//     lets downloads in progress continue, closes idle keep-alive connections.
//  3. close_all() closes whatever is left; close_handles() closes the listeners and the timer.
//     The object may be destroyed once the loop has run the close callbacks.
#pragma once

#include <uv.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "base/result.hpp"
#include "server/http/api.hpp"
#include "server/http/hls_sessions.hpp"
#include "server/http/small_file_cache.hpp"
#include "server/io/guard_counters.hpp"
#include "server/io/listener.hpp"
#include "server/io/proxy_header_reader.hpp"
#include "server/io/tls_reloader.hpp"
#include "server/io/loop_context.hpp"

namespace sluice::server {

class AccessGate;
class HttpConnection;
class StreamRegistry;
class HlsService;

class HttpService {
 public:
  // other_connections counts the loop's other (RTMP) connections: one limit,
  // rtmp.max_connections, covers both.
  HttpService(LoopContext& loop, StreamRegistry& registry, AccessGate& gate, HttpApi& api,
              std::function<size_t()> other_connections);
  ~HttpService();
  HttpService(const HttpService&) = delete;
  HttpService& operator=(const HttpService&) = delete;

  Result<void> start();
  void stop();
  void close_all(const std::string& reason);
  void close_handles();

  LoopContext& loop() { return loop_; }
  // SIGHUP: load the HTTPS certificates again.
  void reload_tls(const char* why);
  StreamRegistry& registry() { return registry_; }
  // The loop's HLS side (server/hls/hls_service.hpp), set by the composition root.
  void set_hls(HlsService* hls) { hls_ = hls; }
  HlsService* hls() { return hls_; }
  HlsSessions& hls_sessions() { return hls_sessions_; }
  // The loop's small downloadable files in memory (server/http/small_file_cache.hpp).
  SmallFileCache& file_cache() { return file_cache_; }
  AccessGate& gate() { return gate_; }
  HttpApi& api() { return api_; }
  bool stopping() const { return stopping_; }
  size_t connection_count() const { return connections_.size(); }
  const std::unordered_set<HttpConnection*>& connections() const { return connections_; }
  // The addresses actually bound (tests listen on port 0).
  const std::vector<std::string>& bound_addresses() const { return bound_; }
  HttpConnection* find(uint64_t id) const;

  void on_connection_closed(HttpConnection* c);

  // One upload at a time per target file: false when another is in progress (409).
  bool claim_upload(const std::string& path) { return uploads_.insert(path).second; }
  void release_upload(const std::string& path) { uploads_.erase(path); }

  // Totals over closed connections, for the stats API.
  uint64_t closed_bytes_in = 0;
  uint64_t closed_bytes_out = 0;
  uint64_t requests = 0;

 private:
  void on_accepted(int fd, bool tls);
  // The connection itself: at once, or once its PROXY header is in (http/https.proxy_protocol,
  // server/io/proxy_header_reader.hpp) with the client's address as peer.
  void open(int fd, uint64_t id, bool tls, std::optional<PeerAddress> peer);
  static void on_tick(uv_timer_t* timer);

  LoopContext& loop_;
  StreamRegistry& registry_;
  AccessGate& gate_;
  HttpApi& api_;
  HlsService* hls_ = nullptr;
  HlsSessions hls_sessions_;
  SmallFileCache file_cache_;
  LogRateLimit peer_limit_log_;
  std::function<size_t()> other_connections_;
  std::vector<std::unique_ptr<TcpListener>> listeners_;
  std::unique_ptr<ProxyHeaderReader> proxy_reader_;  // when http or https has proxy_protocol
  std::unordered_set<HttpConnection*> connections_;
  uv_timer_t tick_{};
  std::unordered_set<std::string> uploads_;
  bool handles_started_ = false;
  bool stopping_ = false;
  std::vector<std::string> bound_;
  std::unique_ptr<TlsReloader> tls_;  // https: the certificates, reloaded when they change
};

}  // namespace sluice::server
