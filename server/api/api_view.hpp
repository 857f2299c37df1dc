// ApiView: what the stats API and /metrics (server/api/) read of a worker loop, and nothing more.
// The composition root (server/server.hpp) implements it; nothing under server/api/ includes the
// root, so the answers can be read, tested and changed without the whole server in view.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <unordered_set>

namespace sluice::config {
struct Config;
}

namespace sluice::server {

class AlertMonitor;
class ApiHistory;
class HlsService;
struct ReloadHistory;
struct ReloadReport;
class HttpService;
class KickedClients;
class LoopLag;
class RelayManager;
class RtmpConnection;
class SrtService;
class StreamRegistry;
class WorkerMesh;
namespace cluster {
class ClusterService;
}

class ApiView {
 public:
  virtual const config::Config& config() const = 0;
  // This loop's index in the mesh (0 on a single loop), and the mesh (null on a single loop).
  virtual uint32_t worker() const = 0;
  virtual WorkerMesh* mesh() = 0;
  virtual uint64_t now_ms() const = 0;
  // When the loop started (loop time, ms), and whether it drains or stops (/readyz).
  virtual uint64_t started_ms() const = 0;
  virtual bool stopping() const = 0;
  virtual bool draining() const = 0;

  virtual StreamRegistry& registry() = 0;
  // This loop's RTMP connections; the counts are every loop's.
  virtual const std::unordered_set<RtmpConnection*>& connections() const = 0;
  virtual size_t connection_count() const = 0;
  virtual size_t http_connection_count() const = 0;
  // The client rows other loops published, less those a DELETE asked to close.
  virtual void for_each_other_loop_client(const std::function<void(const nlohmann::json&)>& row) = 0;
  // Worker 0: connections of other loops a DELETE asked to close (kicked_clients.hpp).
  virtual KickedClients& kicked_clients() = 0;

  virtual HttpService* http() = 0;  // null when http.enabled is false
  virtual SrtService* srt() = 0;    // null unless srt.listen is set
  virtual HlsService& hls() = 0;
  virtual RelayManager& relays() = 0;
  virtual cluster::ClusterService* cluster() = 0;  // null on a single node
  virtual const LoopLag& loop_lag() const = 0;
  virtual uint64_t write_hold_ms() const = 0;
  // Worker 0: reads the configuration file again and applies it; `done` (may be empty) is told how
  // it ended once every loop has the configuration it left (server/api/config_reload_api.hpp).
  virtual void reload_config(const char* trigger, std::function<void(const ReloadReport&)> done) = 0;
  virtual const ReloadHistory& reload_history() const = 0;
  // Worker 0: the last minutes of figures it samples for the page's plots (history_api.hpp); null
  // where nothing samples them.
  virtual ApiHistory* history() { return nullptr; }
  // Worker 0: the stream alerts (alert_monitor.hpp); null on the other loops.
  virtual const AlertMonitor* stream_alerts() const { return nullptr; }

 protected:
  ~ApiView() = default;
};

}  // namespace sluice::server
