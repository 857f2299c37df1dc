#include "server/server.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>

#include <nlohmann/json.hpp>

#include "server/cluster/cluster_service.hpp"
#include "server/hls/hls_service.hpp"
#include "server/http/api_responder.hpp"
#include "server/http/connection.hpp"
#include "server/http/service.hpp"
#include "server/record/record_stats.hpp"
#include "server/record/repair.hpp"
#include "server/record/retention.hpp"
#include "server/relay/relay_manager.hpp"
#include "server/srt/srt_service.hpp"
#include "server/webrtc/webrtc_service.hpp"
#include "server/io/machine_memory.hpp"
#include "server/io/file_watch.hpp"
#include "server/io/guard_counters.hpp"
#include "server/io/logging.hpp"
#include "server/io/net_address.hpp"
#include "server/io/uv_handle.hpp"
#include "server/api/history_api.hpp"
#include "server/api/stats_api.hpp"

namespace sluice::server {

namespace {
constexpr uint64_t kTickMs = 1000;
// How long a graceful stop waits for the last bytes to reach peers before closing everything.
constexpr uint64_t kStopGraceMs = 1500;
// A stopping loop waits at most this long for the other loops to end their publications, looking
// every kStopPollMs.
constexpr uint64_t kStopWaitMs = 500;
constexpr uint64_t kStopPollMs = 5;
// How often a worker refreshes its figures for the stats API (only with several workers).
constexpr uint64_t kSnapshotMs = 250;
constexpr size_t kBusyLoopClients = 500;
constexpr uint64_t kBusyClientsMs = 2000;

}  // namespace

Server::Server(uv_loop_t* loop, config::ConfigSnapshot config, WorkerMesh* mesh, uint32_t worker, HlsDirectory* hls,
               HttpShared* http_shared)
    : loop_(loop),
      initial_config_(config),
      context_(loop, std::move(config), worker),
      vod_files_(loop),
      gate_(context_),
      publish_services_{context_, registry_, gate_},
      rtmp_services_{publish_services_, vod_files_, nullptr},
      rtmp_(std::make_unique<RtmpService>(context_, rtmp_services_, mesh, [this] { return http_connection_count(); })),
      hls_directory_(hls ? hls : &own_hls_directory_),
      http_shared_(http_shared),
      mesh_(mesh),
      worker_(worker) {}

Server::~Server() = default;

size_t Server::http_connection_count() const { return http_ ? http_->total_connections() : 0; }

void Server::for_each_other_loop_client(const std::function<void(const nlohmann::json&)>& row) {
  if (!mesh_) return;
  const uint64_t now = now_ms();
  for (const auto& shared : mesh_->clients(worker_)) {
    for (const auto& client : *shared) {
      if (!kicked_clients_.contains(client["id"].get<uint64_t>(), now)) row(client);
    }
  }
}

HttpApiReply Server::reply(const HttpRequest& req, uint64_t self_id) {
  return http_api_reply(*this, *http_, req, self_id);
}

bool Server::reply_later(const HttpRequest& req, std::function<void(HttpApiReply)> done) {
  return config_reload_later(*this, req, std::move(done));
}

Result<void> Server::start() {
  started_ms_ = now_ms();
  registry_.set_max_streams(config().rtmp.limits.max_streams);
  // Every handle first, so that stop() after a failed listen closes only initialised handles.
  context_.start();
  uv_timer_init(loop_, &tick_);
  tick_.data = this;
  uv_timer_start(&tick_, &Server::on_tick, kTickMs, kTickMs);
  loop_lag_.start(loop_);
  uv_timer_init(loop_, &stop_timer_);
  stop_timer_.data = this;
  if (mesh_) join_mesh();
  hls_ = std::make_unique<HlsService>(context_, registry_, *hls_directory_, mesh_);
  publish_services_.hls = hls_.get();
  relays_ = std::make_unique<RelayManager>(context_, registry_, mesh_, worker_);
  publish_services_.relays = relays_.get();
  registry_.set_upstream_hook(
      [r = relays_.get()](const config::AppConfig& app, const std::string& name) { return r->want(app, name); });
  relays_->start();
  if (config().cluster.enabled()) start_cluster();
  if (auto r = rtmp_->start(); !r) return r;
  // Every loop has an SRT side: srt:// relays need one even where nothing listens for SRT (its
  // thread starts with its first socket).
  srt_ = std::make_unique<SrtService>(publish_services_, mesh_, worker_, [this] {
    return connection_count() + http_connection_count() + SrtService::total_connections();
  });
  if (auto r = srt_->start(); !r) return r;
  relays_->use_srt_links([s = srt_.get()](uint64_t id, RelayLink::Settings settings, RelayLink::Owner* owner) {
    return s->make_link(id, std::move(settings), owner);
  });
  // Every loop has its own WebRTC port (webrtc_service.hpp); it binds last, below.
  if (config().webrtc.enabled()) webrtc_ = std::make_unique<WebrtcService>(publish_services_, worker_);
  if (config().http.enabled) make_http();
  if (worker_ != 0) return start_webrtc();
  start_first_worker();
  if (auto r = rtmp_->listen(bound_); !r) return r;
  if (srt_) {
    if (auto r = srt_->listen(bound_); !r) return r;
  }
  if (auto r = start_webrtc(); !r) return r;
  if (http_) {
    auto r = http_->start(mesh_ && mesh_->size() > 1);
    if (!r) return r;
  }
  return ok();
}

Result<void> Server::start_webrtc() {
  if (!webrtc_) return ok();
  std::vector<std::string> bound;
  if (auto r = webrtc_->start(bound); !r) return r;
  if (worker_ == 0) bound_.insert(bound_.end(), bound.begin(), bound.end());
  if (mesh_) {
    webrtc_->forward_ends_to([this](uint32_t worker, const std::string& session_id) {
      auto e = std::make_unique<MeshEvent>();
      e->kind = MeshEvent::Kind::WebrtcEnd;
      e->from = worker_;
      e->key = session_id;
      mesh_->post(worker, std::move(e));
    });
  }
  return ok();
}

void Server::join_mesh() {
  uv_async_init(loop_, &wake_, &Server::on_wake);
  wake_.data = this;
  // The wake-up handle lives until every worker has stopped (close_mesh_handle), so posts
  // never reach a closed handle; it must not keep a stopped loop running.
  uv_unref(as_handle(&wake_));
  mesh_->attach(worker_, &wake_);
  registry_.attach_mesh(mesh_, worker_);
  uv_timer_init(loop_, &snapshot_timer_);
  snapshot_timer_.data = this;
  // Worker 0 serves the API from its own live figures; the others publish theirs.
  if (worker_ != 0) {
    uv_timer_start(
        &snapshot_timer_, [](uv_timer_t* t) { static_cast<Server*>(t->data)->publish_snapshot(); }, 0, kSnapshotMs);
  }
}

void Server::start_cluster() {
  cluster_ = std::make_unique<cluster::ClusterService>(loop_, initial_config_->cluster, worker_);
  cluster_->start([this](const std::string& key, const std::string& why) { end_lost_publish(key, why); });
  if (worker_ == 0) {
    cluster_->keep_node_record([this] {
      const config::ClusterConfig& c = initial_config_->cluster;
      nlohmann::json advertise{{"rtmp", c.advertise_rtmp}};
      if (!c.advertise_http.empty()) advertise["http"] = c.advertise_http;
      return nlohmann::json{{"advertise", advertise},
                            {"version", SLUICE_VERSION},
                            {"uptime_s", (now_ms() - started_ms()) / 1000},
                            {"workers", mesh_ ? mesh_->size() : 1}}
          .dump();
    });
  }
  publish_services_.cluster = cluster_.get();
  // A player of a stream owned by another node gets it over one pull per node, run by loop 0.
  ClusterPulls pulls{nullptr, config().cluster.token.value};
  if (worker_ == 0) {
    pulls.locate = [c = cluster_.get()](const std::string& key, std::function<void(StreamLocation)> done) {
      c->locate(key, std::move(done));
    };
  }
  relays_->use_cluster(std::move(pulls));
}

void Server::make_http() {
  http_ = std::make_unique<HttpService>(
      context_, registry_, gate_, *this, [this] { return connection_count(); }, http_shared_);
  http_->set_hls(hls_.get());
  http_->set_webrtc(webrtc_.get());
  if (worker_ == 0) return;
  // The stats API is worker 0's: a request for it received here is answered there.
  http_->forward_api_to([this](std::shared_ptr<ApiCall> call) {
    auto e = std::make_unique<MeshEvent>();
    e->kind = MeshEvent::Kind::ApiCall;
    e->from = worker_;
    e->api = std::move(call);
    mesh_->post(0, std::move(e));
  });
}

// What only worker 0 does: the recordings' repair and retention, and the signals.
void Server::start_first_worker() {
  SLUICE_LOG_INFO("event=memory_bounds memory={} reassembly_budget={}{}", machine_memory_bytes(),
                  reassembly_budget_of(config().rtmp.limits),
                  config().rtmp.limits.reassembly_budget == 0 ? " (auto: a sixteenth of the memory)" : "");
  std::vector<RepairDir> record_dirs;
  for (const auto& app : config().apps) {
    if (app.record.enabled()) record_dirs.push_back({app.record.dir, app.record.mp4});
  }
  repair_recordings(loop_, record_dirs);
  retention_ = std::make_unique<RecordRetention>(loop_, retention_rules(config()));
  retention_->start();
  watch_config_file();
  const int signums[3] = {SIGINT, SIGTERM, SIGHUP};
  for (size_t i = 0; i < signals_.size(); ++i) {
    uv_signal_init(loop_, &signals_[i]);
    signals_[i].data = this;
    uv_signal_start(&signals_[i], &Server::on_signal, signums[i]);
  }
  // A peer that vanishes must not kill the process with SIGPIPE.
  std::signal(SIGPIPE, SIG_IGN);
  // Nor a file-size limit (ulimit -f) with SIGXFSZ: a recording's write then fails with EFBIG
  // and that recording ends, like on a full disk.
  std::signal(SIGXFSZ, SIG_IGN);
}

Result<void> Server::join_http(Server& first) {
  if (!http_ || worker_ == 0 || !first.http_) return ok();
  return http_->join(*first.http_);
}

// The registry says another node owns a stream published here (a publisher there replaced this
// one, or this node drains): its publisher goes, so that two nodes never both serve it as theirs
// (docs/cluster.md, "Ownership"). Its publication ends quietly and a pull from the new owner
// continues it, so that the players here stay and follow ("A second publisher on another node").
void Server::end_lost_publish(const std::string& key, const std::string& why) {
  auto it = registry_.entries().find(key);
  if (it == registry_.entries().end() || it->second.publisher == nullptr) return;
  // A draining node's players were asked to reconnect elsewhere: they are told of the end.
  Handover handover;
  if (cluster_->book().draining() ||
      registry_.evict(key, 0, why, nullptr, handover) == StreamRegistry::Eviction::Kept) {
    if (srt_) srt_->close_publisher(it->second.publisher, "cluster: " + why);
    return rtmp_->close_publisher(it->second.publisher, "cluster: " + why);
  }
  if (handover.takeovers != 0) GuardCounters::bump(GuardEvent::PublishTakeover);
  if (!handover.continue_after) return;  // its players were told of the end
  if (!registry_.in_use(key) || !relays_->follow(key, handover)) registry_.end_abandoned_publication(key);
}

void Server::on_wake(uv_async_t* async) {
  auto* self = static_cast<Server*>(async->data);
  while (auto e = self->mesh_->next_event(self->worker_)) self->on_mesh_event(*e);
}

void Server::on_mesh_event(MeshEvent& e) {
  switch (e.kind) {
    case MeshEvent::Kind::Accept: rtmp_->adopt(e.fd, e.id, e.tls); return;
    case MeshEvent::Kind::SrtAccept:
      if (srt_) srt_->adopt(e.fd, e.id);
      return;
    case MeshEvent::Kind::WebrtcEnd:
      if (webrtc_) webrtc_->end(e.key, "DELETE from the client");
      break;
    case MeshEvent::Kind::Kick: {
      bool closed = rtmp_->close_client(e.id, "closed through the API") ||
                    (srt_ && srt_->close_client(e.id, "closed through the API"));
      if (HttpConnection* c = (closed || !http_) ? nullptr : http_->find(e.id)) {
        c->close("closed through the API");
        closed = true;
      }
      // The API lists this loop's clients from its snapshot: refreshed now, not at the next tick
      // (250 ms), so that a list asked for right after the DELETE no longer shows the client.
      if (closed && worker_ != 0) publish_snapshot(true);
      return;
    }
    case MeshEvent::Kind::ApiCall: {
      // Worker 0 answers for the loop that asked, then sends the answer back (now, or once the
      // other loops have done their part: HttpApi::reply_later).
      auto answer = [this](std::shared_ptr<ApiCall> call) {
        auto back = std::make_unique<MeshEvent>();
        back->kind = MeshEvent::Kind::ApiAnswer;
        back->from = worker_;
        const uint32_t to = call->from;
        back->api = std::move(call);
        mesh_->post(to, std::move(back));
      };
      std::shared_ptr<ApiCall> call = std::move(e.api);
      if (!http_) return answer(std::move(call));
      const bool later = reply_later(call->request, [answer, call](HttpApiReply reply) {
        call->reply = std::move(reply);
        answer(call);
      });
      if (later) return;
      HttpApiReply scratch;
      call->reply = http_api_answer(*this, context_, call->request, call->conn_id, scratch);
      return answer(std::move(call));
    }
    case MeshEvent::Kind::ApiAnswer:
      if (http_) http_->api_answered(e.api);
      return;
    case MeshEvent::Kind::RecordStart:
    case MeshEvent::Kind::RecordStop: {
      const bool start = e.kind == MeshEvent::Kind::RecordStart;
      auto r = rtmp_->control_recording(e.key, start);
      if (r && *r != RtmpConnection::RecordControl::Done) {
        SLUICE_LOG_WARN("worker={} event=record_control_ignored stream={} action={}", worker_, e.key,
                        start ? "start" : "stop");
      }
      return;
    }
    case MeshEvent::Kind::PullWanted:
      if (relays_) relays_->on_pull_wanted(e);
      return;
    case MeshEvent::Kind::HlsUpdate:
      if (hls_) hls_->wake(e.key);
      return;
    case MeshEvent::Kind::ConfigReload: take_config(e); return;
    case MeshEvent::Kind::ConfigTaken: on_config_taken(e.id, e.held_us); return;
    case MeshEvent::Kind::TlsReload:
      rtmp_->reload_tls("SIGHUP");
      if (http_) http_->reload_tls("SIGHUP");
      return;
    case MeshEvent::Kind::Stop: stop(); return;
    case MeshEvent::Kind::Drain:
      draining_ = true;
      request_reconnects();
      return;
    default: registry_.on_mesh_event(e, now_ms()); return;
  }
}

void Server::publish_snapshot(bool clients_now) {
  mesh_->publish_snapshot(worker_, worker_snapshot(*this));
  // A row per client is most of a snapshot's cost: a loop with many refreshes them every 2 s
  // (a kick still at once), one with few at every snapshot (docs/http.md, after the example of
  // GET /api/v1/clients).
  const size_t clients = rtmp_->connections().size() + (http_ ? http_->connections().size() : 0);
  const uint64_t now = now_ms();
  if (clients_now || clients < kBusyLoopClients || now - clients_published_ms_ >= kBusyClientsMs) {
    mesh_->publish_clients(worker_, worker_clients(*this));
    clients_published_ms_ = now;
  }
}

void Server::reload_tls() {
  rtmp_->reload_tls("SIGHUP");
  if (http_) http_->reload_tls("SIGHUP");
  if (!mesh_) return;
  for (uint32_t w = 1; w < mesh_->size(); ++w) {
    auto e = std::make_unique<MeshEvent>();
    e->kind = MeshEvent::Kind::TlsReload;
    mesh_->post(w, std::move(e));
  }
}

void Server::close_mesh_handle() {
  if (mesh_) close_handle(&wake_);
}

void Server::on_tick(uv_timer_t* timer) {
  auto* self = static_cast<Server*>(timer->data);
  uint64_t now = self->now_ms();
  self->registry_.sample_rates(now);
  if (self->hls_) self->hls_->tick(now);
  self->rtmp_->tick(now);
  if (self->worker_ == 0 && self->http_) sample_history(*self, *self->http_);
  if (self->worker_ == 0) self->alerts_.tick(*self, self->gate_, now);
}

void Server::on_signal(uv_signal_t* signal, int signum) {
  auto* self = static_cast<Server*>(signal->data);
  if (signum == SIGHUP) {
    // Reloads the certificates on every loop (each loop holds its own context), and the file.
    SLUICE_LOG_INFO("event=signal signal=SIGHUP action=reload");
    self->reload_tls();
    self->reload_config("SIGHUP");
    return;
  }
  self->on_stop_signal(signum == SIGINT ? "SIGINT" : "SIGTERM");
}

void Server::stop() {
  if (stopping_) return;
  stopping_ = true;
  // Publications end first, on every connection of this loop and before the other loops hear of
  // the stop: their players, here or on another loop, are told before they are shut down.
  rtmp_->end_publishers("server stopped");
  if (srt_) srt_->end_publishers("server stopped");
  if (mesh_ && worker_ == 0) {
    for (uint32_t w = 1; w < mesh_->size(); ++w) {
      auto e = std::make_unique<MeshEvent>();
      e->kind = MeshEvent::Kind::Stop;
      mesh_->post(w, std::move(e));
    }
  }
  rtmp_->stop();
  if (relays_) relays_->stop();
  if (mesh_) {
    // The other loops end their publications too; the ends reach this loop's players through the
    // inbox, which is read once they all have (or after a bound) and before the players go.
    ++mesh_->publishers_ended;
    stop_wait_deadline_ms_ = now_ms() + kStopWaitMs;
    uv_timer_start(
        &stop_timer_,
        [](uv_timer_t* t) {
          auto* self = static_cast<Server*>(t->data);
          if (self->mesh_->publishers_ended.load() < self->mesh_->size() &&
              self->now_ms() < self->stop_wait_deadline_ms_) {
            return;
          }
          while (auto e = self->mesh_->next_event(self->worker_)) self->on_mesh_event(*e);
          self->finish_stop();
        },
        kStopPollMs, kStopPollMs);
    return;
  }
  finish_stop();
}

void Server::finish_stop() {
  // SRT has no goodbye to send: its connections close now (their readers lose nothing queued
  // that an ended publication would still bring).
  if (srt_) srt_->close_all("server stopped");
  if (webrtc_) webrtc_->close_all("server stopped");
  rtmp_->shutdown_gracefully();
  if (http_) http_->stop();
  uv_timer_start(
      &stop_timer_,
      [](uv_timer_t* t) {
        auto* self = static_cast<Server*>(t->data);
        self->rtmp_->close_all("server stopped");
        if (self->relays_) self->relays_->close_all("server stopped");
        if (self->http_) self->http_->close_all("server stopped");
        self->close_handles();
      },
      kStopGraceMs, 0);
  if (rtmp_->connections().empty() && http_connection_count() == 0) {
    uv_timer_stop(&stop_timer_);
    close_handles();
  }
}

void Server::close_handles() {
  // The done hooks of the sessions that just ended are still on their way: give them a moment
  // (bounded), so that a restart does not lose them.
  // Likewise the recordings being finished (their record_done hooks come after them).
  auto waiting = [this] { return gate_.in_flight() + RecordStats::get().files_open.load(); };
  if (!hooks_drained_ && waiting() > 0) {
    hook_drain_deadline_ms_ = now_ms() + (RecordStats::get().files_open > 0 ? kRecordDrainMs : kHookDrainMs);
    SLUICE_LOG_INFO("worker={} event=stop_waiting hooks={} recordings={}", worker_, gate_.in_flight(),
                    RecordStats::get().files_open.load());
    uv_timer_start(
        &stop_timer_,
        [](uv_timer_t* t) {
          auto* self = static_cast<Server*>(t->data);
          const size_t left = self->gate_.in_flight() + RecordStats::get().files_open.load();
          if (left > 0 && self->now_ms() < self->hook_drain_deadline_ms_) return;
          uv_timer_stop(t);
          if (left > 0) {
            SLUICE_LOG_WARN("worker={} event=stop_abandoned hooks={} recordings={}", self->worker_,
                            self->gate_.in_flight(), RecordStats::get().files_open.load());
          }
          self->hooks_drained_ = true;
          self->close_handles();
        },
        50, 50);
    return;
  }
  hooks_drained_ = true;
  context_.close_handles();
  gate_.close();
  close_handle(&tick_);
  loop_lag_.close();
  if (mesh_) close_handle(&snapshot_timer_);
  close_handle(&stop_timer_);
  if (worker_ == 0) {
    for (auto& s : signals_) close_handle(&s);
  }
  rtmp_->close_handles();
  if (srt_) srt_->stop();
  if (webrtc_) webrtc_->stop();
  if (cluster_) cluster_->stop();
  if (retention_) retention_->close();
  if (config_watch_) config_watch_->close();
  if (http_) http_->close_handles();
}

}  // namespace sluice::server
