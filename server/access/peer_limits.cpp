#include "server/access/peer_limits.hpp"

#include <algorithm>
#include <mutex>
#include <utility>
#include <unordered_map>

namespace sluice::server {

namespace {

struct Table {
  std::mutex mutex;
  std::unordered_map<std::string, uint32_t> counts;
};

Table& table() {
  static Table t;
  return t;
}

// IPv4-mapped IPv6 (a dual-stack listener's IPv4 peers) counts as the IPv4 address.
std::string key_of(std::span<const uint8_t> peer) {
  static constexpr uint8_t kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  if (peer.size() == 16 && std::equal(peer.begin(), peer.begin() + 12, kMapped)) peer = peer.subspan(12);
  return std::string(peer.begin(), peer.end());
}

}  // namespace

PeerSlot::~PeerSlot() { release(); }

PeerSlot& PeerSlot::operator=(PeerSlot&& o) noexcept {
  if (this != &o) {
    release();
    key_ = std::move(o.key_);
    held_ = std::exchange(o.held_, false);
  }
  return *this;
}

bool PeerSlot::take(std::span<const uint8_t> peer, uint32_t per_ip) {
  release();
  if (per_ip == 0) return true;
  std::string key = key_of(peer);
  Table& t = table();
  std::lock_guard lock(t.mutex);
  uint32_t& n = t.counts[key];
  if (n >= per_ip) {
    if (n == 0) t.counts.erase(key);
    return false;
  }
  ++n;
  key_ = std::move(key);
  held_ = true;
  return true;
}

void PeerSlot::release() {
  if (!held_) return;
  held_ = false;
  Table& t = table();
  std::lock_guard lock(t.mutex);
  auto it = t.counts.find(key_);
  if (it != t.counts.end() && --it->second == 0) t.counts.erase(it);
}

uint32_t PeerSlot::count(std::span<const uint8_t> peer) {
  Table& t = table();
  std::lock_guard lock(t.mutex);
  auto it = t.counts.find(key_of(peer));
  return it == t.counts.end() ? 0 : it->second;
}

}  // namespace sluice::server
