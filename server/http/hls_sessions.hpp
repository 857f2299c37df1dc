// HlsSessions: HLS viewers as access sessions. A player of HLS sends a request every part or
// segment, over one or several connections, so the access gate (rules, the on_play hook, the
// app's limits) cannot be asked each time: the first request of a viewer is admitted like an
// HTTP-FLV play, and its admission is remembered for the viewer, who is the peer address and
// the stream and the query (the key or signature) together. A viewer that asks nothing for
// kIdleMs has left: its seat is given back and play_done is sent.
//
// One set for the whole process (server/http/http_shared.hpp): every worker loop serves HTTP, and
// one viewer's connections may land on different loops, yet it is one viewer (one on_play, one
// seat). Each session belongs to the loop that admitted it: its ticket is that loop's gate's, so
// only that loop ends it (tick, drop). The other loops only look it up and keep it alive.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <span>
#include <string>
#include <unordered_map>

#include "server/access/access_ticket.hpp"

namespace sluice::server {

class HlsSessions {
 public:
  static constexpr uint64_t kIdleMs = 30000;
  static constexpr size_t kMaxSessions = 100000;

  HlsSessions() = default;
  HlsSessions(const HlsSessions&) = delete;
  HlsSessions& operator=(const HlsSessions&) = delete;
  ~HlsSessions();

  // `address`: the peer's address bytes (StreamSocket::peer_address), without its port: a player
  // opens new connections.
  static std::string viewer(std::span<const uint8_t> address, std::string_view key, std::string_view query);
  // True when the viewer was admitted (on any loop) and has not left; counts as a request.
  bool known(const std::string& viewer, uint64_t now_ms);
  // Body bytes sent to a known viewer, for its session's line in the access log.
  void add_bytes(const std::string& viewer, uint64_t n);
  // Remembers an admission made by `worker`'s gate. When another loop admitted the same viewer
  // meanwhile, that session stays and `ticket` ends here (the caller's loop owns it).
  void admit(std::string viewer, AccessTicket ticket, uint64_t now_ms, uint32_t worker = 0);
  // Once a second on each loop: the viewers of `worker` that left end their sessions.
  void tick(uint64_t now_ms, uint32_t worker = 0);
  // The loop stops: its sessions end now (at now_ms, "server stopped"; without it, with no time).
  void drop(uint32_t worker, uint64_t now_ms = 0);
  size_t size() const;
  // Viewers per stream key ("app/name"), for the stats API and /metrics.
  std::map<std::string, size_t> viewers_by_stream() const;

 private:
  struct Session {
    AccessTicket ticket;
    uint64_t last_ms = 0;
    uint32_t worker = 0;
  };
  // Takes `worker`'s sessions that match out of the map (under the lock); the caller ends them
  // after unlocking, since an ending ticket calls its gate (hooks, seats).
  template <typename Pred>
  std::vector<Session> take(uint32_t worker, Pred pred);

  mutable std::mutex mutex_;
  std::unordered_map<std::string, Session> sessions_;
};

}  // namespace sluice::server
