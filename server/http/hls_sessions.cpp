#include "server/http/hls_sessions.hpp"

#include <vector>

namespace sluice::server {

HlsSessions::~HlsSessions() = default;

std::string HlsSessions::viewer(std::span<const uint8_t> address, std::string_view key, std::string_view query) {
  // The address's length first: its bytes may be anything, the key may not hold a '\n'.
  std::string v(1, static_cast<char>(address.size()));
  v.append(address.begin(), address.end());
  v.reserve(v.size() + key.size() + query.size() + 2);
  v.append(1, '\n').append(key).append(1, '\n').append(query);
  return v;
}

bool HlsSessions::known(const std::string& viewer, uint64_t now_ms) {
  std::lock_guard lock(mutex_);
  auto it = sessions_.find(viewer);
  if (it == sessions_.end()) return false;
  // Loops' clocks differ by a few ms: a session never goes back in time.
  if (now_ms > it->second.last_ms) it->second.last_ms = now_ms;
  return true;
}

void HlsSessions::add_bytes(const std::string& viewer, uint64_t n) {
  std::lock_guard lock(mutex_);
  if (auto it = sessions_.find(viewer); it != sessions_.end()) it->second.ticket.add_bytes_out(n);
}

template <typename Pred>
std::vector<HlsSessions::Session> HlsSessions::take(uint32_t worker, Pred pred) {
  std::vector<Session> out;
  for (auto it = sessions_.begin(); it != sessions_.end();) {
    if (it->second.worker == worker && pred(it->second)) {
      out.push_back(std::move(it->second));
      it = sessions_.erase(it);
    } else {
      ++it;
    }
  }
  return out;
}

void HlsSessions::admit(std::string viewer, AccessTicket ticket, uint64_t now_ms, uint32_t worker) {
  std::vector<Session> left;
  {
    std::lock_guard lock(mutex_);
    if (sessions_.size() >= kMaxSessions) {
      left = take(worker, [&](const Session& s) { return now_ms >= s.last_ms + kIdleMs; });
    }
    auto it = sessions_.find(viewer);
    if (it != sessions_.end()) {
      if (now_ms > it->second.last_ms) it->second.last_ms = now_ms;
      if (it->second.worker != worker) {
        // Admitted on two loops at once: the first one stays, this one's ticket ends below.
        left.push_back(Session{std::move(ticket), now_ms, worker});
      } else {
        std::swap(it->second.ticket, ticket);
        left.push_back(Session{std::move(ticket), now_ms, worker});
      }
    } else if (sessions_.size() < kMaxSessions) {  // else admitted, but not remembered: asked again next time
      sessions_.emplace(std::move(viewer), Session{std::move(ticket), now_ms, worker});
    } else {
      left.push_back(Session{std::move(ticket), now_ms, worker});
    }
  }
  for (Session& s : left) s.ticket.end(now_ms);
}

size_t HlsSessions::size() const {
  std::lock_guard lock(mutex_);
  return sessions_.size();
}

std::map<std::string, size_t> HlsSessions::viewers_by_stream() const {
  std::map<std::string, size_t> out;
  std::lock_guard lock(mutex_);
  for (const auto& [viewer, session] : sessions_) {
    // viewer(): length, address, '\n', key, '\n', query.
    const size_t key_at = 2 + static_cast<uint8_t>(viewer[0]);
    const size_t key_end = viewer.find('\n', key_at);
    if (key_at > viewer.size() || key_end == std::string::npos) continue;
    ++out[viewer.substr(key_at, key_end - key_at)];
  }
  return out;
}

void HlsSessions::tick(uint64_t now_ms, uint32_t worker) {
  std::vector<Session> left;
  {
    std::lock_guard lock(mutex_);
    left = take(worker, [&](const Session& s) { return now_ms >= s.last_ms + kIdleMs; });
  }
  for (Session& s : left) {
    s.ticket.set_end_reason("hls viewer left");
    s.ticket.end(now_ms);
  }
}

void HlsSessions::drop(uint32_t worker, uint64_t now_ms) {
  std::vector<Session> left;
  {
    std::lock_guard lock(mutex_);
    left = take(worker, [](const Session&) { return true; });
  }
  if (now_ms == 0) return;  // each ticket ends as it goes (its own end time)
  for (Session& s : left) {
    s.ticket.set_end_reason("server stopped");
    s.ticket.end(now_ms);  // play_done and the access log get the session's duration
  }
}

}  // namespace sluice::server
