// RtmpService: the RTMP side of a worker loop, shaped like HttpService (server/http/service.hpp).
// It owns the RTMP and RTMPS listeners (worker 0 binds them), admits what they accept through the
// AdmissionPolicy (server/io/accept_policy.hpp), hands every other accepted socket to the next
// loop in turn (WorkerMesh: RTMP needs no SO_REUSEPORT group, and the loops stay even), reads PROXY
// headers, keeps this loop's RTMPS certificates and the set of its RTMP connections. Created and
// driven by the composition root (server/server.cpp).
//
// Lifecycle: start() on every loop (certificates, PROXY reader), listen() on worker 0; adopt() takes
// the sockets other loops hand over; stop_listening() (a drain, a stop); then end_publishers(),
// shutdown_gracefully(), close_all() and close_handles() as the root's stop goes on.
#pragma once

#include <uv.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "base/result.hpp"
#include "server/io/accept_policy.hpp"
#include "server/io/listener_set.hpp"
#include "server/io/net_address.hpp"
#include "server/rtmp/connection.hpp"

struct sockaddr_storage;

namespace sluice::server {

class LoopContext;
class ProxyHeaderReader;
class StreamSocket;
class TlsReloader;
class WorkerMesh;

class RtmpService {
 public:
  // services: what every connection uses (its on_destroyed is this service's). mesh: null on a
  // single loop. other_connections: the HTTP connections of every loop (one limit covers both).
  RtmpService(LoopContext& loop, RtmpServices& services, WorkerMesh* mesh, std::function<size_t()> other_connections);
  ~RtmpService();
  RtmpService(const RtmpService&) = delete;
  RtmpService& operator=(const RtmpService&) = delete;

  // Every loop: loads the RTMPS certificates (a failure stops the server from starting) and makes
  // the PROXY header reader when rtmp or rtmps wants one.
  Result<void> start();
  // Worker 0: binds rtmp.listen and rtmps.listen; the error names the address. `bound` gets the
  // addresses actually bound.
  Result<void> listen(std::vector<std::string>& bound);
  // Worker 0, a reload (server/config_reload.cpp): binds the addresses of `next` not listened on
  // yet (all or none; the error names the address), then, once every other step of the reload has
  // succeeded, closes those `next` no longer lists; or takes the new ones back.
  Result<void> open_listeners(const config::Config& next, std::vector<std::string>& bound);
  void close_unlisted_listeners(const config::Config& next);
  void undo_listeners() { listeners_.undo_last_open(); }
  // A socket another loop accepted and handed to this one (counted by the sender).
  void adopt(int fd, uint64_t id, bool tls);

  // No new connections: the listeners close (a drain); stop() also refuses what is handed over.
  void stop_listening();
  void stop();
  // Each connection's timeouts. The closes they make are spread over loop iterations,
  // kClosesPerIteration at a time: thousands of handshakes timing out together (a flood of
  // connections that never finish) must not hold the loop's players.
  void tick(uint64_t now_ms);
  static constexpr size_t kClosesPerIteration = 128;
  // The steps of a stop, each on every connection: publications end (players are told), then the
  // peers are told and closed once their bytes are out, then whatever is left is closed.
  void end_publishers(const std::string& why);
  void shutdown_gracefully();
  void close_all(const std::string& why);
  void close_handles();
  // A drain: the clients that announced they can reconnect are asked to; returns how many.
  size_t request_reconnects();
  // SIGHUP: the RTMPS certificates again.
  void reload_tls(const char* why);

  // The API's DELETE: closes connection `id` if it is here.
  bool close_client(uint64_t id, const std::string& why);
  // Closes the connection that is `publisher` (a stream another node owns), if it is here.
  void close_publisher(const SessionPeer* publisher, const std::string& why);
  // Starts or stops recording `key` on the connection that publishes it; nullopt: not published here.
  std::optional<RtmpConnection::RecordControl> control_recording(const std::string& key, bool start);

  const std::unordered_set<RtmpConnection*>& connections() const { return connections_; }
  // RTMP connections of every loop.
  size_t connection_count() const;

 private:
  void on_accepted(int fd, bool tls, const sockaddr_storage& peer);
  bool hand_over(int fd, bool tls);
  bool expects_proxy_header(bool tls) const;
  void read_proxy_header(int fd, uint64_t id, bool tls);
  void open_after_header(int fd, uint64_t id, bool tls, PeerAddress peer);
  // A connection accepted here, handed to this loop or opened after its PROXY header; `refusal`:
  // over rtmp.max_connections, closed with that reason.
  void open(int fd, uint64_t id, bool tls, std::optional<PeerAddress> peer, const std::string& refusal = {});
  void check_peer_limit(RtmpConnection& c);
  // A copy of the set: closing a connection erases it.
  std::vector<RtmpConnection*> snapshot() const { return {connections_.begin(), connections_.end()}; }
  void continue_sweep();
  static void on_sweep(uv_idle_t* idle);

  LoopContext& loop_;
  RtmpServices& services_;
  WorkerMesh* mesh_;
  std::function<size_t()> other_connections_;
  AdmissionPolicy admission_{"rtmp"};
  ListenerSet listeners_;                            // rtmp.listen, and rtmps.listen (tls)
  std::unique_ptr<ProxyHeaderReader> proxy_reader_;  // when rtmp or rtmps has proxy_protocol
  std::unique_ptr<TlsReloader> tls_;                 // rtmps: this loop's certificates
  std::unordered_set<RtmpConnection*> connections_;
  uint32_t next_worker_ = 0;
  bool stopping_ = false;
  // The tick's sweep, when its closes did not fit one iteration (connections_ says who is left).
  std::vector<RtmpConnection*> sweep_;
  size_t sweep_at_ = 0;
  uint64_t sweep_now_ms_ = 0;
  uv_idle_t sweep_idle_{};
  bool sweep_idle_open_ = false;
};

}  // namespace sluice::server
