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
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "config/config.hpp"
#include "media/stream_hub.hpp"
#include "server/live/mesh_forwarder.hpp"
#include "server/live/worker_mesh.hpp"

namespace sluice::server {

class SessionPeer;
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

// What the registry may ask of whoever publishes a name (server/ingest/live_publisher.hpp, a relay
// pull): how long it has been quiet, and to give the name up to a new publisher (docs/live.md, "A
// second publisher").
class PublisherSeat {
 public:
  virtual ~PublisherSeat() = default;
  // Milliseconds since the publication last brought a frame (since it began, before its first).
  virtual uint64_t quiet_ms() const = 0;
  // A new publisher (`taker`, on this loop, or nullptr: on another one) takes the name: end the
  // publication now, so that the name is free when this returns, and tell the peer why. Returns
  // where the taker's timestamps begin when it ended quietly for the taker to continue
  // (Publication::end_quietly), nothing when its players were told of an end.
  virtual std::optional<uint32_t> give_up(const std::string& why, const SessionPeer* taker) = 0;
  // A player lost a picture and asks for a keyframe (a WebRTC player's PLI or FIR): a publisher
  // whose encoder makes one on demand (WHIP) asks it; the others (RTMP, SRT) cannot.
  virtual void request_keyframe() {}
};

// What a publisher taking a name over gets from the one it replaced: the stream's takeover count
// with this one, and where the hub's timestamps go on when the publication does.
struct Handover {
  uint32_t takeovers = 0;
  std::optional<uint32_t> continue_after;
};

class StreamRegistry {
 public:
  struct Entry {
    std::unique_ptr<media::StreamHub> hub;
    const SessionPeer* publisher = nullptr;  // the publishing connection; nullptr while nobody publishes here
    PublisherSeat* seat = nullptr;           // the publication of `publisher`, once it began
    // The publisher history the API shows: when the current one began (wall clock, ms since the
    // epoch; 0 while nobody publishes here), and how many times one took the name over from another.
    int64_t published_since_ms = 0;
    uint32_t takeovers = 0;
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
  // A player of key asks for a keyframe: the publisher's seat here, or the owner's through the
  // mesh (counted in keyframe_requests()).
  void request_keyframe(const std::string& key);
  uint64_t keyframe_requests() const { return keyframe_requests_; }
  // A player of key lost a frame (slow-player policy).
  void count_drop(const std::string& key);
  // Every stream's drops on this worker, including streams that have ended.
  uint64_t dropped_frames() const { return dropped_frames_; }

  // Joins the worker mesh.
  void attach_mesh(WorkerMesh* mesh, uint32_t worker);
  // Subscribe / Unsubscribe / PublishStart / PublishEnd / Frame events from other workers.
  // now_ms: the loop's clock, for the health a mirror measures too (media/stream_health.hpp), so
  // the stream's figures stay shown while this worker's players wait after the publisher left.
  void on_mesh_event(MeshEvent& e, uint64_t now_ms = 0);

  media::StreamHub* find(const std::string& key);
  // Published here or, with several workers, on another one (its messages may not be here yet).
  bool is_live(const std::string& key);
  // The hub of key, created if need be; nullptr when that would pass rtmp.limits.max_streams.
  media::StreamHub* get_or_create(const std::string& key, const media::StreamHub::Options& options);
  enum class Claim { Claimed, Taken, Full };
  // Claims the name for a publisher: Taken if someone else already publishes it, Full if the
  // stream would pass rtmp.limits.max_streams.
  Claim claim_publisher(const std::string& key, const SessionPeer* publisher, const media::StreamHub::Options& options);
  // Streams (hubs) on every worker together, and the most there may be (0 = no limit). A stream
  // with players on several workers has a hub on each and counts once per worker.
  static uint32_t total_streams();
  void set_max_streams(uint32_t max) { max_streams_ = max; }
  void release_publisher(const std::string& key, const SessionPeer* publisher);
  // The publication that `publisher` (which claimed key) has begun: what a takeover asks to give up.
  void set_seat(const std::string& key, const SessionPeer* publisher, PublisherSeat* seat);

  // A second publisher of key (docs/live.md, "A second publisher"). Freed: nobody publishes key on
  // this worker any more (the one who did gave up, or there was none). Kept: the publisher stays
  // (stale_ms was not 0 and it sent a frame within stale_ms, or it cannot be asked). Elsewhere:
  // another worker publishes it (evict_elsewhere).
  enum class Eviction { Freed, Kept, Elsewhere };
  // The publisher of key gives up to `taker` at once (stale_ms 0), or only when quiet for stale_ms;
  // `handover` is filled when it did (set_takeovers() and the taker's Publication use it).
  Eviction evict(const std::string& key, uint64_t stale_ms, const std::string& why, const SessionPeer* taker,
                 Handover& handover);
  // The same on the worker that owns key, asked through the mesh; `done(freed, handover)` runs on
  // this loop with its answer.
  using EvictDone = std::function<void(bool freed, const Handover& handover)>;
  void evict_elsewhere(const std::string& key, uint64_t stale_ms, EvictDone done);
  // A publication that ended quietly for a taker that then could not claim the name: its players
  // here and on the other workers are told of the end after all.
  void end_abandoned_publication(const std::string& key);
  void set_takeovers(const std::string& key, uint32_t n);
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
  // Evict from another worker: evict here, answer with EvictDone.
  void on_evict_request(const MeshEvent& ev);
  void on_evict_answer(const MeshEvent& ev);

  std::unordered_map<std::string, Entry> entries_;
  uint64_t dropped_frames_ = 0;
  uint64_t keyframe_requests_ = 0;
  WorkerMesh* mesh_ = nullptr;
  uint32_t worker_ = 0;
  uint32_t max_streams_ = 0;
  UpstreamHook upstream_hook_;
  // evict_elsewhere() callers waiting for the owner's answer, by key.
  std::unordered_map<std::string, std::vector<EvictDone>> evict_waiters_;
};

}  // namespace sluice::server
