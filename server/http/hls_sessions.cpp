#include "server/http/hls_sessions.hpp"

namespace sluice::server {

std::string HlsSessions::viewer(std::string_view peer, std::string_view key, std::string_view query) {
  // The peer's address without its port: a player opens new connections.
  std::string_view host = peer;
  if (host.starts_with('[')) {
    host = host.substr(0, host.find(']') + 1);
  } else if (size_t colon = host.find(':'); colon != std::string_view::npos && colon == host.rfind(':')) {
    host = host.substr(0, colon);
  }
  std::string v;
  v.reserve(host.size() + key.size() + query.size() + 2);
  v.append(host).append(1, '\n').append(key).append(1, '\n').append(query);
  return v;
}

bool HlsSessions::known(const std::string& viewer, uint64_t now_ms) {
  auto it = sessions_.find(viewer);
  if (it == sessions_.end()) return false;
  it->second.last_ms = now_ms;
  return true;
}

void HlsSessions::admit(std::string viewer, AccessTicket ticket, uint64_t now_ms) {
  if (sessions_.size() >= kMaxSessions) tick(now_ms);
  if (sessions_.size() >= kMaxSessions) return;  // admitted, but not remembered: asked again next time
  sessions_[std::move(viewer)] = Session{std::move(ticket), now_ms};
}

void HlsSessions::tick(uint64_t now_ms) {
  for (auto it = sessions_.begin(); it != sessions_.end();) {
    if (now_ms >= it->second.last_ms + kIdleMs) {
      it->second.ticket.set_end_reason("hls viewer left");
      it->second.ticket.end(now_ms);
      it = sessions_.erase(it);
    } else {
      ++it;
    }
  }
}

}  // namespace sluice::server
