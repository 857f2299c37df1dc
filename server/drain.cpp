// Draining a node (docs/cluster.md, "Draining"): with shutdown.drain set, SIGTERM/SIGINT does not
// stop at once. Worker 0 closes its RTMP and RTMPS listeners (the HTTP side stays up so that
// /readyz can say 503 and /healthz 200), every loop asks its RTMP clients that can reconnect to do
// so, and the sessions go on until they have all ended or the drain period is over; then the
// usual stop() ends what is left (publishers end, recordings are finished, players are told).
// A second signal stops at once. Only worker 0 receives signals and runs the drain's timer.
#include <memory>

#include "server/cluster/cluster_service.hpp"
#include "server/api/http_figures.hpp"
#include "server/io/logging.hpp"
#include "server/server.hpp"
#include "server/srt/srt_service.hpp"

namespace sluice::server {

namespace {
// How often a draining node looks whether its sessions have all ended.
constexpr uint64_t kDrainPollMs = 100;

}  // namespace

void Server::on_stop_signal(const char* name) {
  if (stopping_) return;
  if (draining_) {
    SLUICE_LOG_INFO("event=signal signal={} action=stop", name);
    return end_drain("second signal");
  }
  if (config().shutdown.drain.count() > 0) return begin_drain(name);
  SLUICE_LOG_INFO("event=signal signal={} action=stop", name);
  stop();
}

// RTMP connections of every loop and the busy HTTP connections of every loop (HTTP-FLV, downloads,
// HLS, the API...: an idle keep-alive connection, a metrics scraper's or a health checker's, is no
// session that a drain waits for). Other loops' HTTP figures come from their snapshots (250 ms).
size_t Server::session_count() {
  return connection_count() + SrtService::total_connections() + http_totals(*this, http_.get()).busy;
}

void Server::begin_drain(const char* signal_name) {
  draining_ = true;
  drain_started_ms_ = now_ms();
  drain_deadline_ms_ = drain_started_ms_ + static_cast<uint64_t>(config().shutdown.drain.count());
  // No new RTMP clients: the load balancer's connection attempts fail here at once and go to
  // another node. (/readyz already answers 503: stopping() includes the drain.)
  rtmp_->stop_listening();
  if (srt_) srt_->stop_listening();
  const size_t sessions = session_count();
  const size_t srt = SrtService::total_connections();
  SLUICE_LOG_INFO("event=drain_start signal={} sessions={} rtmp={} http={} srt={} drain_ms={}", signal_name, sessions,
                  connection_count(), sessions - connection_count() - srt, srt, config().shutdown.drain.count());
  if (mesh_) {
    for (uint32_t w = 0; w < mesh_->size(); ++w) {
      if (w == worker_) continue;
      auto e = std::make_unique<MeshEvent>();
      e->kind = MeshEvent::Kind::Drain;
      mesh_->post(w, std::move(e));
    }
  }
  request_reconnects();
  // stop_timer_ is idle until stop(), which restarts it with its own callback.
  uv_timer_start(&stop_timer_, &Server::on_drain_tick, kDrainPollMs, kDrainPollMs);
}

void Server::request_reconnects() {
  rtmp_services_.draining = true;
  // Before the requests go out: a publisher that reconnects elsewhere finds its claim marked.
  if (cluster_) cluster_->drain();
  const size_t asked = rtmp_->request_reconnects();
  SLUICE_LOG_INFO("worker={} event=reconnect_requests sent={} connections={}", worker_, asked,
                  rtmp_->connections().size());
}

void Server::on_drain_tick(uv_timer_t* timer) {
  auto* self = static_cast<Server*>(timer->data);
  if (!self->draining()) return;
  if (self->session_count() == 0) return self->end_drain("sessions ended");
  if (self->now_ms() >= self->drain_deadline_ms_) self->end_drain("drain period over");
}

void Server::end_drain(const char* why) {
  if (stopping_) return;
  SLUICE_LOG_INFO("event=drain_end reason=\"{}\" sessions_left={} elapsed_ms={}", why, session_count(),
                  now_ms() - drain_started_ms_);
  stop();
}

}  // namespace sluice::server
