#include "server/http/hls_sessions.hpp"

namespace sluice::server {

std::string HlsSessions::viewer(std::span<const uint8_t> address, std::string_view key, std::string_view query) {
  // The address's length first: its bytes may be anything, the key may not hold a '\n'.
  std::string v(1, static_cast<char>(address.size()));
  v.append(address.begin(), address.end());
  v.reserve(v.size() + key.size() + query.size() + 2);
  v.append(1, '\n').append(key).append(1, '\n').append(query);
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

std::map<std::string, size_t> HlsSessions::viewers_by_stream() const {
  std::map<std::string, size_t> out;
  for (const auto& [viewer, session] : sessions_) {
    // viewer(): length, address, '\n', key, '\n', query.
    const size_t key_at = 2 + static_cast<uint8_t>(viewer[0]);
    const size_t key_end = viewer.find('\n', key_at);
    if (key_at > viewer.size() || key_end == std::string::npos) continue;
    ++out[viewer.substr(key_at, key_end - key_at)];
  }
  return out;
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
