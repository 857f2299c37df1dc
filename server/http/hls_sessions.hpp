// HlsSessions: HLS viewers as access sessions. A player of HLS sends a request every part or
// segment, over one or several connections, so the access gate (rules, the on_play hook, the
// app's limits) cannot be asked each time: the first request of a viewer is admitted like an
// HTTP-FLV play, and its admission is remembered for the viewer, who is the peer address and
// the stream and the query (the key or signature) together. A viewer that asks nothing for
// kIdleMs has left: its seat is given back and play_done is sent.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <unordered_map>

#include "server/access/access_ticket.hpp"

namespace sluice::server {

class HlsSessions {
 public:
  static constexpr uint64_t kIdleMs = 30000;
  static constexpr size_t kMaxSessions = 100000;

  // `address`: the peer's address bytes (StreamSocket::peer_address), without its port: a player
  // opens new connections.
  static std::string viewer(std::span<const uint8_t> address, std::string_view key, std::string_view query);
  // True when the viewer was admitted and has not left; counts as a request.
  bool known(const std::string& viewer, uint64_t now_ms);
  void admit(std::string viewer, AccessTicket ticket, uint64_t now_ms);
  // Once a second: the viewers that left end their sessions.
  void tick(uint64_t now_ms);
  size_t size() const { return sessions_.size(); }
  // Viewers per stream key ("app/name"), for the stats API and /metrics.
  std::map<std::string, size_t> viewers_by_stream() const;
  void clear() { sessions_.clear(); }

 private:
  struct Session {
    AccessTicket ticket;
    uint64_t last_ms = 0;
  };
  std::unordered_map<std::string, Session> sessions_;
};

}  // namespace sluice::server
