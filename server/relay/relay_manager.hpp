// RelayManager: the relays of one worker loop (docs/relays.md). Push targets follow the local
// publications: when a stream of an app with push targets (config, or added through the API)
// starts, one PushTarget per matching target starts with it and stops when it ends; a publish on an
// edge app is forwarded to its origins the same way. Pulls (apps.NAME.pull, edge apps) all run on
// worker 0: a player on another loop asks worker 0 through the mesh, so a stream has one upstream
// connection per server.
#pragma once

#include <uv.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/config.hpp"
#include "server/live/worker_mesh.hpp"
#include "server/relay/relay_services.hpp"
#include "server/relay/stream_locator.hpp"

namespace sluice::media {
class StreamHub;
}

namespace sluice::server {

class PushTarget;
class Pull;

class RelayManager {
 public:
  RelayManager(LoopContext& loop, StreamRegistry& registry, WorkerMesh* mesh, uint32_t worker);
  ~RelayManager();
  RelayManager(const RelayManager&) = delete;
  RelayManager& operator=(const RelayManager&) = delete;

  // Starts the timer and (worker 0) the always-on pulls.
  void start();
  // In a cluster, a stream that no app pulls and nobody publishes here is pulled from the node
  // that owns it (docs/cluster.md, "Location").
  void use_cluster(ClusterPulls cluster) { cluster_ = std::move(cluster); }
  // srt:// targets and upstreams are made by the SRT wing (server/relay/relay_link.hpp).
  void use_srt_links(SrtLinkFactory make) { services_.srt_links = std::move(make); }
  // Server shutdown: every relay ends (pushes send their end first).
  void stop();
  // The end of a stop: connections still sending their end are closed.
  void close_all(const std::string& why);

  // A local publication of app/name started or ended.
  // extra: more targets (url, key) for this publication alone (the on_publish hook's).
  void on_publish_start(const config::AppConfig& app, const std::string& name, media::StreamHub& hub,
                        const std::vector<std::pair<std::string, std::string>>& extra = {});
  void on_publish_end(const std::string& key);
  // A player (RTMP or HTTP-FLV) asks for app/name, which is not live: start its pull if the app
  // pulls it. True when it is pulled (or being asked for).
  bool want(const config::AppConfig& app, const std::string& name);
  // A publication here ended quietly because a publisher on another node took the name
  // (Server::end_lost_publish): a cluster pull from that node continues it, on worker 0, so that
  // the players stay. False when no pull can (no cluster, the app pulls from upstreams of its
  // own, stopping): the caller ends the publication for them.
  bool follow(const std::string& key, const Handover& handover);
  // PullWanted from another worker (worker 0 only): a player's want(), or a follow().
  void on_pull_wanted(const MeshEvent& e);

  nlohmann::json status() const;  // {"push": [...], "pull": [...]}

  // A reload swapped the configuration (relay_reload.cpp): the configured push targets of the live
  // publications, and the always-on pulls (worker 0), are started and stopped to match it.
  void on_config_changed();

 private:
  static void on_timer(uv_timer_t* t);
  void tick();
  void sync_runtime_targets();
  // The configured targets (apps.NAME.push, an edge's origins) of app/name not running yet.
  void start_config_pushes(const config::AppConfig& app, const std::string& name, media::StreamHub& hub);
  void match_pulls(const config::Config& config);
  void start_pull(const config::AppConfig& app, const std::string& name);
  bool start_cluster_pull(const config::AppConfig& app, const std::string& name, const Handover& follows = {});
  Pull* find_pull(const std::string& key) const;
  PushTarget* add_push(const std::string& target_id, const std::vector<std::string>& urls,
                       const std::string& key_secret, bool verify, const config::AppConfig& app,
                       const std::string& name, media::StreamHub& hub);
  bool pushing(const std::string& target_id, const std::string& key) const;

  DrainingRelays draining_;
  RelayServices services_;
  WorkerMesh* mesh_;
  uint32_t worker_;
  uv_timer_t timer_{};
  bool timer_started_ = false;
  bool stopped_ = false;
  std::vector<std::unique_ptr<PushTarget>> pushes_;
  std::vector<std::unique_ptr<Pull>> pulls_;
  // The local publications, for targets added at run time.
  struct Publication {
    std::string app;
    std::string name;
    media::StreamHub* hub;
  };
  std::vector<Publication> publications_;
  uint64_t runtime_generation_ = 0;
  std::optional<ClusterPulls> cluster_;
};

// Whether a stream name is in a relay's `streams` list (every name when the list is empty).
bool relay_selects(const std::vector<std::string>& streams, const std::string& name);
// A relay's settings as one string, to tell whether a reload changed them.
std::string relay_origin(const std::vector<std::string>& urls, const std::string& key, bool verify);

// A push target the configuration gives a stream of its app: apps.APP.push[i] ("APP#i"), or an
// edge's origins ("APP#origin"). Started by RelayManager::start_config_pushes, compared by a reload.
struct ConfiguredPush {
  std::string id;
  std::vector<std::string> urls;
  std::string key;
  bool verify = true;
  std::string origin() const { return relay_origin(urls, key, verify); }
};
std::vector<ConfiguredPush> configured_pushes(const config::AppConfig& app, const std::string& name);

}  // namespace sluice::server
