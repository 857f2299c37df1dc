// KickedClients: on worker 0, the ids of connections on other loops that DELETE
// /api/v1/clients/{id} asked their loop to close, until that loop's rows can no longer list them.
//
// The API answers on worker 0 and reads the other loops' client rows from the worker mesh; the
// kick travels to the owning loop as an event, so for a moment (longer on a busy loop) its rows
// still show the connection. Remembering the kick for longer than the rows can be stale (2 s,
// server.cpp) makes "DELETE, then list" deterministic: the list, the recordings list and a second
// DELETE leave the id out at once (docs/http.md).
#pragma once

#include <cstdint>
#include <unordered_map>

namespace sluice::server {

class KickedClients {
 public:
  // Longer than the oldest rows another loop may publish (2 s), with a margin for a busy loop.
  static constexpr uint64_t kRememberMs = 5000;

  void add(uint64_t id, uint64_t now_ms) {
    forget_old(now_ms);
    until_[id] = now_ms + kRememberMs;
  }
  bool contains(uint64_t id, uint64_t now_ms) const {
    auto it = until_.find(id);
    return it != until_.end() && it->second > now_ms;
  }
  size_t size() const { return until_.size(); }

 private:
  void forget_old(uint64_t now_ms) {
    std::erase_if(until_, [now_ms](const auto& entry) { return entry.second <= now_ms; });
  }
  std::unordered_map<uint64_t, uint64_t> until_;  // id -> loop time (ms) when it may be forgotten
};

}  // namespace sluice::server
