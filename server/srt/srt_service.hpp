// SrtService: the SRT side of one worker loop (docs/srt.md, "How it runs"). Every loop has one,
// with its own SrtPoller and its connections. Worker 0 also owns the listeners (libsrt binds one
// UDP socket per port and demultiplexes its connections itself, so loops cannot share a port the
// way SO_REUSEPORT lets TCP listeners do): it accepts, and hands each new socket to the loops in
// turn through the worker mesh (an SRTSOCKET is a number valid in the whole process).
//
// The handshake's decision (srt_handshake.hpp) runs in libsrt's thread, inside the listen
// callback: it reads only the configuration, which no loop changes.
//
// The service also makes the loop's srt:// relay links (srt_relay_link.hpp), so every loop has
// one; its poller thread starts with the first SRT socket of the loop, not before.
#pragma once

#include <srt/srt.h>
#include <uv.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/result.hpp"
#include "server/ingest/publish_services.hpp"
#include "server/live/worker_mesh.hpp"
#include "server/relay/relay_link.hpp"
#include "server/srt/srt_poller.hpp"

namespace sluice::server {

class SrtConnection;
class SrtRelayLink;

// What the poller's news about one socket go to: an accepted connection or a relay link.
class SrtSocketOwner {
 public:
  virtual void on_ready(int events) = 0;  // SRT_EPOLL_IN, OUT, ERR

 protected:
  ~SrtSocketOwner() = default;
};

class SrtService {
 public:
  // `open_connections`: the connections of every protocol and loop, for rtmp.max_connections.
  SrtService(PublishServices& services, WorkerMesh* mesh, uint32_t worker, std::function<size_t()> open_connections);
  ~SrtService();
  SrtService(const SrtService&) = delete;
  SrtService& operator=(const SrtService&) = delete;

  // Ready to make connections and links (the poller waits for the first socket).
  Result<void> start();
  // Worker 0: binds srt.listen; `bound` gets "srt udp ADDRESS:PORT" for each.
  Result<void> listen(std::vector<std::string>& bound);
  // An srt:// push target's or pull's connection (server/relay/relay_link.hpp); null when stopping.
  RelayLink* make_link(uint64_t id, RelayLink::Settings settings, RelayLink::Owner* owner);
  // Draining: no new SRT callers (the listeners close; connections go on).
  void stop_listening();
  // A socket worker 0 accepted for this loop.
  void adopt(SRTSOCKET s, uint64_t id);

  // Stop steps, as for the other services: publications end, then every connection closes, then
  // the poller and the listeners go (the loop must run once more for the handles' close).
  void end_publishers(const std::string& why);
  void close_all(const std::string& why);
  void stop();

  bool close_client(uint64_t id, const std::string& why);
  void close_publisher(const SessionPeer* publisher, const std::string& why);
  // Connections of this loop, by socket; and of the whole process (every loop's service).
  const std::unordered_map<SRTSOCKET, SrtConnection*>& connections() const { return connections_; }
  static size_t total_connections();

  // For connections and links: the loop's poller (started on first use; null if it cannot
  // start), the sockets whose news go to whom, and a deferred delete.
  SrtPoller* poller();
  void track(SRTSOCKET s, SrtSocketOwner* owner) { owners_[s] = owner; }
  void untrack(SRTSOCKET s) { owners_.erase(s); }
  void retire(SrtConnection* c);
  void retire(SrtRelayLink* l);

 private:
  void on_ready(const SrtPoller::Ready& r);
  void accept_all(SRTSOCKET listener);
  static int on_listen(void* opaque, SRTSOCKET ns, int hs_version, const sockaddr* peer, const char* stream_id);
  static void on_reap(uv_timer_t* t);

  PublishServices& services_;
  WorkerMesh* mesh_;
  uint32_t worker_;
  std::function<size_t()> open_connections_;
  std::unique_ptr<SrtPoller> poller_;
  std::vector<SRTSOCKET> listeners_;
  std::unordered_map<SRTSOCKET, SrtConnection*> connections_;
  std::unordered_map<SRTSOCKET, SrtSocketOwner*> owners_;
  std::vector<SrtRelayLink*> links_;
  std::vector<SrtConnection*> retired_;
  std::vector<SrtRelayLink*> retired_links_;
  std::vector<std::pair<SRTSOCKET, uint64_t>> refused_;  // socket, when to close it
  uv_timer_t reap_{};
  void reap_soon(uint64_t delay_ms = 0);
  // A socket refused right after its accept, closed a little later (on_reap says why).
  void close_later(SRTSOCKET s);

  bool started_ = false;
  bool poller_failed_ = false;
  bool stopping_ = false;
  uint32_t next_worker_ = 0;
};

}  // namespace sluice::server
