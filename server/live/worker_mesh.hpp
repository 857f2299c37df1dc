// WorkerMesh: what the worker loops share when Sluice runs several (config `workers`).
//
// Each worker is one libuv loop on its own thread with its own connections, hubs and flush
// lists; nothing on the media path is shared or locked. Workers talk by events: every worker has
// an inbox, a lock-free multi-producer queue drained on its own loop after a uv_async wake-up.
// A live stream belongs to the worker of its publisher; every other worker with players of that
// name gets each message once (a Frame event) and fans it out locally from a mirror hub.
//
// The StreamDirectory (behind a mutex, used only when a stream is published, unpublished, first
// watched or last left on a worker) says who owns a name and which workers want it.
#pragma once

#include <uv.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_map>
#include <vector>

#include "config/config.hpp"
#include "media/frame.hpp"
#include "server/io/listener_set.hpp"

namespace sluice::server {

struct ApiCall;

struct MeshEvent {
  enum class Kind : uint8_t {
    Accept,          // fd: a new RTMP connection for this worker
    SrtAccept,       // fd: a new SRT socket (an SRTSOCKET) for this worker, id its connection id
    Subscribe,       // from wants every message of key (sent to the owner)
    Unsubscribe,     // from no longer has players of key (sent to the owner)
    PublishStart,    // key's publisher (re)started on the owner
    PublishEnd,      // key's publisher left
    Frame,           // one message of key, in order
    Kick,            // close connection id, if it is here
    RecordStart,     // start recording key, published here (the stats API, record.mode manual)
    RecordStop,      // stop recording key
    PullWanted,      // a player of key waits here: start its pull (sent to worker 0, which runs pulls)
    TlsReload,       // load the RTMPS certificates again (SIGHUP on worker 0)
    HlsUpdate,       // key's HLS muxer published a new part: wake the requests waiting for it
    Stop,            // graceful stop
    Drain,           // SIGTERM with shutdown.drain: ask this loop's RTMP clients to reconnect elsewhere
    ApiCall,         // api: an API request received on loop `from`, for worker 0 to answer
    ApiAnswer,       // api: worker 0's answer, back to the loop that asked
    Evict,           // a publisher on `from` wants key: the owner's gives up (id: stale_ms, 0 = at once)
    EvictDone,       // the owner's answer to Evict (freed, continues, timestamp; id: the stream's takeovers)
    WebrtcEnd,       // end WebRTC session `key` (a DELETE received on another loop than the session's)
    ConfigReload,    // config: worker 0 reloaded the configuration; this loop takes the snapshot too (id: the reload)
    ConfigTaken,     // ... and tells worker 0 it has (id: the reload)
    KeyframeWanted,  // a player of key on `from` asks the publisher for a keyframe (sent to the owner)
  };
  Kind kind = Kind::Stop;
  uint32_t from = 0;
  std::string key;
  media::FramePtr frame;
  int fd = -1;
  bool tls = false;        // Accept: an RTMPS connection (its TLS handshake has not begun)
  bool freed = false;      // EvictDone: nobody publishes key on the owner any more
  bool continues = false;  // EvictDone: its publication ended quietly, for the asker's to continue
  uint32_t timestamp = 0;  // ... after this timestamp
  uint64_t id = 0;
  uint64_t held_us = 0;                      // ConfigTaken: how long taking the configuration held this loop
  std::shared_ptr<ApiCall> api;              // ApiCall, ApiAnswer (server/http/api.hpp)
  config::ConfigSnapshot config;             // ConfigReload
  std::vector<ListenerSet::Address> listen;  // ConfigReload: the HTTP addresses worker 0 listens on now
  std::atomic<MeshEvent*> next{nullptr};
};

// Intrusive multi-producer single-consumer queue (D. Vyukov's): push is one atomic exchange, pop
// never blocks. pop() may briefly see nothing while a push is half done; the pusher's wake-up
// comes after its push completes, so the consumer is woken again.
class EventQueue {
 public:
  EventQueue();
  ~EventQueue();
  EventQueue(const EventQueue&) = delete;
  EventQueue& operator=(const EventQueue&) = delete;

  void push(std::unique_ptr<MeshEvent> e);
  std::unique_ptr<MeshEvent> pop();

 private:
  void push_node(MeshEvent* n);

  std::atomic<MeshEvent*> head_;
  MeshEvent* tail_;
  MeshEvent stub_;
};

class StreamDirectory {
 public:
  explicit StreamDirectory(size_t workers) : workers_(workers) {}

  static constexpr int kNoOwner = -1;
  // Claims key for a publisher on worker; on success, fills the other workers that want it.
  bool claim(const std::string& key, uint32_t worker, std::vector<uint32_t>& interested);
  void release(const std::string& key, uint32_t worker);
  // The owner at the moment the interest is recorded (kNoOwner if none).
  int add_interest(const std::string& key, uint32_t worker);
  // add_interest, unless key is a name no worker has yet and `max` names (every worker's, each
  // counted once: rtmp.limits.max_streams) are held already; false then, and nothing recorded.
  bool add_interest_within(const std::string& key, uint32_t worker, size_t max, int& owner);
  int remove_interest(const std::string& key, uint32_t worker);
  int owner(const std::string& key);
  // Another worker than `worker` has a hub of key (players, or a stream waited for).
  bool wanted_elsewhere(const std::string& key, uint32_t worker);

 private:
  struct Entry {
    int owner = kNoOwner;
    std::vector<bool> interest;
  };
  Entry& entry(const std::string& key);
  void erase_if_empty(const std::string& key);

  size_t workers_;
  std::mutex mutex_;
  std::unordered_map<std::string, Entry> entries_;
};

// A worker's figures for the stats API and /metrics: its streams and clients as JSON, rendered by
// the worker itself a few times a second (see http_api.cpp), read by the worker serving the API.
using WorkerSnapshot = nlohmann::json;

class WorkerMesh {
 public:
  explicit WorkerMesh(size_t workers);
  ~WorkerMesh();
  WorkerMesh(const WorkerMesh&) = delete;
  WorkerMesh& operator=(const WorkerMesh&) = delete;

  size_t size() const { return inboxes_.size(); }
  StreamDirectory& directory() { return directory_; }

  // Called by each worker on its own loop before any event is posted to it.
  void attach(uint32_t worker, uv_async_t* wake) { inboxes_[worker]->wake = wake; }
  void post(uint32_t to, std::unique_ptr<MeshEvent> e);
  std::unique_ptr<MeshEvent> next_event(uint32_t worker) { return inboxes_[worker]->queue.pop(); }

  // RTMP connections across all workers (rtmp.max_connections counts them all).
  std::atomic<size_t> rtmp_connections{0};
  // Workers that, stopping, have ended the publications on their loop (Server::stop): each waits
  // for all of them before it shuts its players down, so players hear of every stream's end.
  std::atomic<size_t> publishers_ended{0};

  void publish_snapshot(uint32_t worker, WorkerSnapshot s);
  // Every worker's latest snapshot except `except`'s (the caller's own figures are live). Shared,
  // not copied: an API answer reads them several times.
  std::vector<std::shared_ptr<const WorkerSnapshot>> snapshots(uint32_t except);
  // A worker's clients (a JSON array of /api/v1/clients rows) go apart from its figures: with
  // thousands of players they cost far more to build, so a busy loop refreshes them less often.
  void publish_clients(uint32_t worker, WorkerSnapshot rows);
  std::vector<std::shared_ptr<const WorkerSnapshot>> clients(uint32_t except);

 private:
  struct Inbox {
    EventQueue queue;
    uv_async_t* wake = nullptr;
  };
  std::vector<std::unique_ptr<Inbox>> inboxes_;
  // One shared value per worker (null until its first), under snapshot_mutex_.
  using Slots = std::vector<std::shared_ptr<const WorkerSnapshot>>;
  void put(Slots& slots, uint32_t worker, WorkerSnapshot value);
  Slots all_but(const Slots& slots, uint32_t except);

  StreamDirectory directory_;
  std::mutex snapshot_mutex_;
  Slots snapshots_;
  Slots clients_;
};

}  // namespace sluice::server
