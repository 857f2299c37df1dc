// StreamRegistry: "app/stream" -> the live hub of that name and who publishes to it, on one
// worker loop. A hub exists while it has a publisher or players; the last one out removes it.
//
// With several workers (attach_mesh), a hub on a worker without the publisher is a mirror: the
// owning worker's MeshForwarder posts it every message and it fans them out locally, exactly as
// a local publisher's hub would. The StreamDirectory keeps one publisher per name across workers.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "config/config.hpp"
#include "media/stream_hub.hpp"
#include "server/live/mesh_forwarder.hpp"
#include "server/live/worker_mesh.hpp"

namespace sluice::server {

class StreamSocket;
class WorkerMesh;

// Live stream names become registry keys, log fields and (recording) file names, RTMP and HTTP-FLV
// alike: 1..200 bytes of ASCII letters, digits and - _ . ~ = + @ : , ! in segments separated by
// single '/', no segment "." or "..", nothing else (docs/configuration.md, rtmp.limits). So no
// name is a path outside a folder it is joined to.
bool valid_stream_name(std::string_view name);
// Why a name is not valid, for the refusal and the log; empty when it is.
std::string_view stream_name_problem(std::string_view name);
// The hub settings a live app asks for.
media::StreamHub::Options hub_options(const config::AppConfig& app);

class StreamRegistry {
 public:
  struct Entry {
    std::unique_ptr<media::StreamHub> hub;
    const StreamSocket* publisher = nullptr;  // the publishing connection; nullptr while nobody publishes here
    // Players holding the hub whether or not they are subscribed now (a paused live player is
    // not): the hub stays while any does.
    uint32_t holders = 0;
    // On the owning worker: one per other worker that has players of this stream.
    std::vector<std::unique_ptr<MeshForwarder>> forwarders;
    // Ingest rate in kbit/s, sampled every second and smoothed over a few seconds.
    double kbps = 0;
    uint64_t rate_bytes = 0;
    uint64_t rate_at_ms = 0;
    // Frames this worker's players of the stream lost to the slow-player policy.
    uint64_t dropped_frames = 0;
  };

  StreamRegistry() = default;
  StreamRegistry(const StreamRegistry&) = delete;
  StreamRegistry& operator=(const StreamRegistry&) = delete;
  ~StreamRegistry();

  // Once a second: every entry's ingest rate.
  void sample_rates(uint64_t now_ms);
  // A player of key lost a frame (slow-player policy).
  void count_drop(const std::string& key);
  // Every stream's drops on this worker, including streams that have ended.
  uint64_t dropped_frames() const { return dropped_frames_; }

  // Joins the worker mesh.
  void attach_mesh(WorkerMesh* mesh, uint32_t worker);
  // Subscribe / Unsubscribe / PublishStart / PublishEnd / Frame events from other workers.
  void on_mesh_event(MeshEvent& e);

  media::StreamHub* find(const std::string& key);
  // Published here or, with several workers, on another one (its messages may not be here yet).
  bool is_live(const std::string& key);
  // The hub of key, created if need be; nullptr when that would pass rtmp.limits.max_streams.
  media::StreamHub* get_or_create(const std::string& key, const media::StreamHub::Options& options);
  enum class Claim { Claimed, Taken, Full };
  // Claims the name for a publisher: Taken if someone else already publishes it, Full if the
  // stream would pass rtmp.limits.max_streams.
  Claim claim_publisher(const std::string& key, const StreamSocket* publisher,
                        const media::StreamHub::Options& options);
  // Streams (hubs) on every worker together, and the most there may be (0 = no limit). A stream
  // with players on several workers has a hub on each and counts once per worker.
  static uint32_t total_streams();
  void set_max_streams(uint32_t max) { max_streams_ = max; }
  void release_publisher(const std::string& key, const StreamSocket* publisher);
  // A player of key keeps its hub (taken at its start, given back at its end; the last one out
  // removes the hub if nobody publishes it).
  void hold(const std::string& key);
  void release(const std::string& key);
  // A player asks for app/name, which is not live: the relays (server/relay/relay_manager.hpp) may
  // pull it from upstream. True when it is coming, so the player waits whatever wait_for_publisher says.
  using UpstreamHook = std::function<bool(const config::AppConfig& app, const std::string& name)>;
  void set_upstream_hook(UpstreamHook hook) { upstream_hook_ = std::move(hook); }
  bool ask_upstream(const config::AppConfig& app, const std::string& name) {
    return upstream_hook_ && upstream_hook_(app, name);
  }
  // Someone plays, records or relays key, here or (with several workers) on another loop: what
  // keeps an on-demand pull going. The publisher does not count.
  bool in_use(const std::string& key);
  // Removes the hub when nobody publishes, plays or holds it any more.
  void remove_if_unused(const std::string& key);
  size_t size() const { return entries_.size(); }
  const std::unordered_map<std::string, Entry>& entries() const { return entries_; }

 private:
  void add_forwarder(const std::string& key, Entry& e, uint32_t to);
  void drop_forwarders(Entry& e);
  // Subscribe / Unsubscribe to the worker that publishes key, if that is another one.
  void tell_owner(int owner, MeshEvent::Kind kind, const std::string& key);

  std::unordered_map<std::string, Entry> entries_;
  uint64_t dropped_frames_ = 0;
  WorkerMesh* mesh_ = nullptr;
  uint32_t worker_ = 0;
  uint32_t max_streams_ = 0;
  UpstreamHook upstream_hook_;
};

}  // namespace sluice::server
