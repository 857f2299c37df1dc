// Server: the composition root of one worker loop. It owns the loop's LoopContext, the stream
// registry, the VOD file cache, the RTMP side (server/rtmp/service.hpp) and the HTTP side, wires
// them together, and keeps the housekeeping tick. Worker 0 also binds the RTMP listeners and owns
// the signals; with several workers (WorkerMesh) its RTMP side hands every other accepted
// connection to the next worker in turn.
// Every worker serves HTTP on listeners of its own (join_http), and worker 0 answers the stats API
// for all of them. Nothing but main.cpp and the root's own files (directly in server/) include this.
#pragma once

#include <uv.h>

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "base/result.hpp"
#include "config/config.hpp"
#include "server/io/loop_lag.hpp"
#include "server/access/gate.hpp"
#include "server/io/guard_counters.hpp"
#include "server/hls/hls_share.hpp"
#include "server/http/api.hpp"
#include "server/io/loop_context.hpp"
#include "server/api/api_view.hpp"
#include "server/api/config_reload_api.hpp"
#include "server/api/alert_monitor.hpp"
#include "server/api/history.hpp"
#include "server/api/kicked_clients.hpp"
#include "server/live/stream_registry.hpp"
#include "server/live/worker_mesh.hpp"
#include "server/ingest/publish_services.hpp"
#include "server/rtmp/connection.hpp"
#include "server/rtmp/service.hpp"
#include "server/vod/files.hpp"

namespace sluice::server {

class FileWatch;
class RecordRetention;
struct RetentionRule;
class RelayManager;
class SrtService;
class WebrtcService;

class HttpService;
struct HttpShared;
class HlsService;
namespace cluster {
class ClusterService;
}

class Server final : public HttpApi, public ApiView {
 public:
  // mesh is nullptr for a single loop; worker is this loop's index in the mesh.
  // hls is what the workers share of their HLS muxers (one per server; nullptr: this one has its own),
  // http_shared what their HTTP sides share (likewise).
  Server(uv_loop_t* loop, config::ConfigSnapshot config, WorkerMesh* mesh = nullptr, uint32_t worker = 0,
         HlsDirectory* hls = nullptr, HttpShared* http_shared = nullptr);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds every listener and starts the timers; fails with the address that could not be bound.
  Result<void> start();
  // After every worker started: a worker other than 0 listens for HTTP on the addresses worker 0
  // bound (the same ports: tests listen on port 0). Nothing to do without HTTP or for worker 0.
  Result<void> join_http(Server& first);
  // Graceful stop (SIGINT/SIGTERM): stop accepting, end streams, close connections, let the loop end.
  void stop();

  const config::Config& config() const override { return context_.config(); }
  StreamRegistry& registry() override { return registry_; }
  AccessGate& gate() { return gate_; }
  uint64_t now_ms() const override { return context_.now_ms(); }
  // The ports actually bound (tests listen on port 0).
  const std::vector<std::string>& bound_addresses() const { return bound_; }
  // RTMP connections of every worker.
  size_t connection_count() const override { return rtmp_->connection_count(); }
  WorkerMesh* mesh() override { return mesh_; }
  // Worker 0: clients of other loops a DELETE asked to close (server/api/kicked_clients.hpp).
  KickedClients& kicked_clients() override { return kicked_clients_; }
  // The client rows the other loops published (worker_clients()), less those a DELETE asked to
  // close: what the API lists, and what a DELETE can find, for connections on other loops.
  void for_each_other_loop_client(const std::function<void(const nlohmann::json&)>& row) override;
  const LoopLag& loop_lag() const override { return loop_lag_; }
  RelayManager& relays() override { return *relays_; }
  // This loop's part in the cluster (docs/cluster.md); null on a single node.
  cluster::ClusterService* cluster() override { return cluster_.get(); }
  // How long this loop now holds live media before writing it (server/io/write_hold.hpp).
  uint64_t write_hold_ms() const override { return context_.flush_hold_ms(); }
  uint32_t worker() const override { return worker_; }
  // After the loop ended (all workers joined): closes the mesh wake-up handle.
  void close_mesh_handle();
  // This loop's HTTP side (nullptr when http.enabled is false); the HTTP connections of every
  // loop count against rtmp.max_connections together with the RTMP ones.
  HttpService* http() override { return http_.get(); }
  SrtService* srt() override { return srt_.get(); }
  HlsService& hls() override { return *hls_; }
  // HTTP connections of every loop.
  size_t http_connection_count() const override;
  // For the stats API: the RTMP connections, and when start() ran (loop time, ms).
  const std::unordered_set<RtmpConnection*>& connections() const override { return rtmp_->connections(); }
  uint64_t started_ms() const override { return started_ms_; }
  // SIGTERM or SIGINT came: no new clients (/readyz says 503), whether draining or stopping.
  bool stopping() const override { return stopping_ || draining_; }
  // The drain (shutdown.drain, server/drain.cpp) is under way and stop() has not come yet.
  bool draining() const override { return draining_ && !stopping_; }

  // The stats API (HttpApi, for the HTTP side).
  HttpApiReply reply(const HttpRequest& req, uint64_t self_id) override;
  bool reply_later(const HttpRequest& req, std::function<void(HttpApiReply)> done) override;

  // Worker 0: reads the configuration file again and applies it on every loop, or keeps the one
  // in force whole (server/config_reload.cpp). SIGHUP, a change of the file and the API call it.
  // The reload ends (its log line, the history, `done`) once every loop has taken it.
  void reload_config(const char* trigger, std::function<void(const ReloadReport&)> done = {}) override;
  const ReloadHistory& reload_history() const override { return reload_history_; }
  ApiHistory* history() override { return worker_ == 0 ? &history_ : nullptr; }
  const AlertMonitor* stream_alerts() const override { return worker_ == 0 ? &alerts_ : nullptr; }
  // Told when a reload begins (nullptr) and how it ended (systemd's RELOADING=1 and READY=1).
  void set_reload_observer(std::function<void(const ReloadReport*)> observer) {
    reload_observer_ = std::move(observer);
  }

 private:
  // The parts of start(): the worker mesh's handles, the cluster's registry and pulls, the HTTP
  // side, and what only worker 0 does (recordings' repair and retention, signals).
  void join_mesh();
  // Binds this loop's WebRTC port (after the other listeners: a failure must find every handle
  // it closes initialised).
  Result<void> start_webrtc();
  void start_cluster();
  void make_http();
  void start_first_worker();
  static void on_tick(uv_timer_t* timer);
  static void on_signal(uv_signal_t* signal, int signum);
  // Draining (server/drain.cpp): SIGTERM/SIGINT drains when shutdown.drain is set, a second one
  // stops; a drain ends in stop() once the sessions are gone or the period is over.
  void on_stop_signal(const char* name);
  void begin_drain(const char* signal_name);
  void request_reconnects();  // this loop's RTMP clients that announced they can reconnect
  size_t session_count();
  static void on_drain_tick(uv_timer_t* timer);
  void end_drain(const char* why);
  // The rest of stop() once every loop has ended its publications (or a short while has passed).
  void finish_stop();
  uint64_t stop_wait_deadline_ms_ = 0;
  static void on_wake(uv_async_t* async);
  void on_mesh_event(MeshEvent& e);
  void end_lost_publish(const std::string& key, const std::string& why);
  // Publishes this loop's figures, and its client rows when they are due (or `clients_now`).
  void publish_snapshot(bool clients_now = false);
  // SIGHUP: every loop loads the RTMPS certificates again.
  void reload_tls();
  // The reload's steps (server/config_reload.cpp): the file watch (worker 0), the checks, and the
  // swap every loop makes.
  void watch_config_file();
  // Returns how many other loops were sent the new snapshot (their acknowledgements end it).
  uint32_t try_reload(ReloadReport& report, uint64_t id);
  void apply_config(config::ConfigSnapshot next);
  void take_config(MeshEvent& e);                       // another loop than worker 0: ConfigReload
  void on_config_taken(uint64_t id, uint64_t held_us);  // worker 0: another loop has taken reload `id`
  void end_reloads();                                   // tells the reloads every loop has taken, in order
  void close_handles();

  uv_loop_t* loop_;
  // The configuration the server started with: what cannot change without a restart (the cluster)
  // keeps pointing into it (server/config_reload.hpp).
  config::ConfigSnapshot initial_config_;
  LoopContext context_;
  StreamRegistry registry_;
  VodFiles vod_files_;
  AccessGate gate_;
  PublishServices publish_services_;       // what every protocol's publishers reach (server/ingest/)
  std::unique_ptr<WebrtcService> webrtc_;  // null unless webrtc.listen is set (docs/webrtc.md)
  std::unique_ptr<SrtService> srt_;        // null unless srt.listen is set (docs/srt.md)
  RtmpServices rtmp_services_;
  std::unique_ptr<RtmpService> rtmp_;  // the RTMP side: listeners, accept, hand-over, connections
  HlsDirectory own_hls_directory_;
  HlsDirectory* hls_directory_;
  HttpShared* http_shared_;
  std::unique_ptr<HlsService> hls_;  // before http_: its responders wait on it
  std::unique_ptr<HttpService> http_;
  std::unique_ptr<RecordRetention> retention_;  // worker 0 only
  std::unique_ptr<FileWatch> config_watch_;     // worker 0, when started with a file
  ReloadHistory reload_history_;
  // Reloads waiting for the other loops to take them (worker 0), oldest first: they end in order.
  struct PendingReload {
    uint64_t id = 0;
    ReloadReport report;
    uint32_t loops_left = 0;
    std::function<void(const ReloadReport&)> done;
  };
  std::deque<PendingReload> pending_reloads_;
  uint64_t next_reload_id_ = 1;
  std::function<void(const ReloadReport*)> reload_observer_;
  std::unique_ptr<RelayManager> relays_;
  std::unique_ptr<cluster::ClusterService> cluster_;  // stream ownership in the registry; null on a single node
  uv_timer_t tick_{};
  LoopLag loop_lag_;
  uv_timer_t stop_timer_{};
  // A stopping server waits this long at most for publish_done / play_done calls in flight.
  static constexpr uint64_t kHookDrainMs = 3000;
  // ... and for recordings still being written or finished (a large file takes a copy to finish).
  static constexpr uint64_t kRecordDrainMs = 30000;
  bool hooks_drained_ = false;
  uint64_t hook_drain_deadline_ms_ = 0;
  uv_async_t wake_{};
  uv_timer_t snapshot_timer_{};
  uint64_t clients_published_ms_ = 0;
  std::array<uv_signal_t, 3> signals_{};  // SIGINT, SIGTERM (stop), SIGHUP (reload certificates)
  WorkerMesh* mesh_ = nullptr;
  KickedClients kicked_clients_;
  ApiHistory history_;   // worker 0: the page's plots, sampled on the tick (server/api/history_api.hpp)
  AlertMonitor alerts_;  // worker 0: apps.NAME.alerts over every loop's streams
  uint32_t worker_ = 0;
  std::vector<std::string> bound_;
  uint64_t started_ms_ = 0;
  bool stopping_ = false;
  bool draining_ = false;
  uint64_t drain_started_ms_ = 0;
  uint64_t drain_deadline_ms_ = 0;
};

// A configuration made immutable for the loops, counted while alive (config_snapshots_alive()).
config::ConfigSnapshot make_config_snapshot(config::Config config);
// The recordings' retention rules of a configuration (worker 0 sweeps them).
std::vector<RetentionRule> retention_rules(const config::Config& config);

}  // namespace sluice::server
