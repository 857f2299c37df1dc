// HttpService: the HTTP side of a worker loop. Owns the HTTP listeners, the set of HTTP
// connections and a 1 s tick for their timeouts; their writes go through the loop's one
// FlushScheduler like every other socket's. Created and started by the composition root
// (server/server.cpp) on every worker loop when config.http.enabled.
//
// HTTP on every loop (docs/http.md): each loop's service has its own listening sockets on the
// same addresses (SO_REUSEPORT: the kernel spreads connections, nothing is handed between loops)
// and serves every kind of request itself, except the stats API: worker 0 holds the whole
// server's figures and the API's actions (relays, recordings, the cluster), so another loop sends
// an API request there over the WorkerMesh and writes the answer it gets back (ApiCall). What the
// loops must agree on (upload claims, HLS viewers, the connection count) is in HttpShared.
//
// Lifecycle:
//  1. start() (worker 0) binds every http.listen address, join() (the other loops) binds the
//     same addresses and ports; an error names the address.
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
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "base/result.hpp"
#include "server/http/api.hpp"
#include "server/http/http_shared.hpp"
#include "server/io/accept_policy.hpp"
#include "server/io/guard_counters.hpp"
#include "server/io/listener_set.hpp"
#include "server/io/proxy_header_reader.hpp"
#include "server/io/tls_reloader.hpp"
#include "server/io/loop_context.hpp"
#include "server/snapshot/snapshot_service.hpp"

namespace sluice::server {

class AccessGate;
class ApiResponder;
class HttpConnection;
class StreamRegistry;
class HlsService;
class WebrtcService;

class HttpService {
 public:
  // other_connections counts the server's other (RTMP) connections: one limit,
  // rtmp.max_connections, covers both. shared: what the loops' HTTP sides share (nullptr: a
  // service alone, with its own).
  HttpService(LoopContext& loop, StreamRegistry& registry, AccessGate& gate, HttpApi& api,
              std::function<size_t()> other_connections, HttpShared* shared = nullptr);
  ~HttpService();
  HttpService(const HttpService&) = delete;
  HttpService& operator=(const HttpService&) = delete;

  // grouped: other loops will join() these listeners.
  Result<void> start(bool grouped = false);
  // Another loop's service: listens on the addresses `first` bound, in the same group.
  Result<void> join(const HttpService& first);
  // A reload (server/config_reload.cpp). Worker 0: binds the http and https addresses of `next`
  // not listened on yet (all or none), then closes those it no longer lists or takes the new ones
  // back; `group` is what the other loops then follow().
  Result<void> open_listeners(const config::Config& next, bool grouped, std::vector<std::string>& bound);
  void close_unlisted_listeners(const config::Config& next);
  void undo_listeners() { listeners_.undo_last_open(); }
  std::vector<ListenerSet::Address> listening() const { return listeners_.bound(); }
  // The other loops: join the addresses worker 0 listens on now, close the others.
  void follow_listeners(const std::vector<ListenerSet::Address>& group);
  void stop();
  void close_all(const std::string& reason);
  void close_handles();

  LoopContext& loop() { return loop_; }
  // SIGHUP: load the HTTPS certificates again.
  void reload_tls(const char* why);
  StreamRegistry& registry() { return registry_; }
  // The loop's HLS side (server/hls/hls_service.hpp), set by the composition root.
  void set_hls(HlsService* hls) { hls_ = hls; }
  // The loop's WebRTC side (server/webrtc/webrtc_service.hpp), for WHIP and WHEP offers; null
  // when webrtc.listen is not set.
  void set_webrtc(WebrtcService* webrtc) { webrtc_ = webrtc; }
  WebrtcService* webrtc() { return webrtc_; }
  HlsService* hls() { return hls_; }
  HlsSessions& hls_sessions() { return shared_->hls_sessions; }
  // Small downloadable files in memory, shared by the loops (server/http/shared_file_cache.hpp).
  SharedFileCache& file_cache() { return shared_->files; }
  AccessGate& gate() { return gate_; }
  HttpApi& api() { return api_; }
  // The loop's stream snapshots (/{app}/{stream}/snapshot.jpg).
  SnapshotService& snapshots() { return snapshots_; }
  bool stopping() const { return stopping_; }
  size_t connection_count() const { return connections_.size(); }
  // HTTP connections of every loop.
  size_t total_connections() const { return shared_->connections.load(std::memory_order_relaxed); }
  const std::unordered_set<HttpConnection*>& connections() const { return connections_; }
  // The addresses actually bound (tests listen on port 0).
  const std::vector<std::string>& bound_addresses() const { return bound_; }
  HttpConnection* find(uint64_t id) const;

  void on_connection_closed(HttpConnection* c);

  // One upload at a time per target file, on every loop: false when another is in progress (409).
  UploadClaims& uploads() { return shared_->uploads; }

  // The stats API on a loop other than worker 0's: forward(call) takes a request there (the
  // composition root posts it), answer(call) brings the reply back to the responder waiting.
  using ApiForward = std::function<void(std::shared_ptr<ApiCall>)>;
  void forward_api_to(ApiForward forward) { forward_api_ = std::move(forward); }
  bool api_elsewhere() const { return static_cast<bool>(forward_api_); }
  void ask_api(std::shared_ptr<ApiCall> call, ApiResponder* waiting);
  void api_answered(const std::shared_ptr<ApiCall>& call);
  // On worker 0: a request whose answer waits for the other loops (HttpApi::reply_later) waits
  // here like one asked of another loop; false when the API answers it at once.
  bool answer_later(const std::shared_ptr<ApiCall>& call, ApiResponder* waiting);
  void stop_waiting(const ApiCall* call) { api_waiting_.erase(call); }

  // Totals over closed connections, for the stats API.
  uint64_t closed_bytes_in = 0;
  uint64_t closed_bytes_out = 0;
  uint64_t requests = 0;

 private:
  Result<void> start_timer_and_tls();
  void on_accepted(int fd, bool tls, const sockaddr_storage& peer);
  // The connection itself: at once, or once its PROXY header is in (http/https.proxy_protocol,
  // server/io/proxy_header_reader.hpp) with the client's address as peer.
  void open(int fd, uint64_t id, bool tls, std::optional<PeerAddress> peer);
  static void on_tick(uv_timer_t* timer);

  LoopContext& loop_;
  StreamRegistry& registry_;
  AccessGate& gate_;
  HttpApi& api_;
  WebrtcService* webrtc_ = nullptr;
  HlsService* hls_ = nullptr;
  SnapshotService snapshots_;
  std::unique_ptr<HttpShared> own_shared_;
  HttpShared* shared_;
  ApiForward forward_api_;
  std::unordered_map<const ApiCall*, ApiResponder*> api_waiting_;
  AdmissionPolicy admission_{"http"};
  std::function<size_t()> other_connections_;
  ListenerSet listeners_;                            // http.listen, and https.listen (tls)
  std::unique_ptr<ProxyHeaderReader> proxy_reader_;  // when http or https has proxy_protocol
  std::unordered_set<HttpConnection*> connections_;
  uv_timer_t tick_{};
  bool handles_started_ = false;
  bool stopping_ = false;
  std::vector<std::string> bound_;
  std::unique_ptr<TlsReloader> tls_;  // https: the certificates, reloaded when they change
};

}  // namespace sluice::server
