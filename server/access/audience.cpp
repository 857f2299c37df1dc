#include "server/access/audience.hpp"

#include <mutex>
#include <unordered_map>
#include <utility>

namespace sluice::server {

namespace {

struct Counts {
  std::mutex mutex;
  std::unordered_map<std::string, uint32_t> app_publishers;
  std::unordered_map<std::string, uint32_t> app_players;
  std::unordered_map<std::string, uint32_t> stream_players;
};

Counts& counts() {
  static Counts c;
  return c;
}

void decrement(std::unordered_map<std::string, uint32_t>& map, const std::string& key) {
  auto it = map.find(key);
  if (it != map.end() && --it->second == 0) map.erase(it);
}

}  // namespace

Seat::~Seat() { release(); }

Seat::Seat(Seat&& o) noexcept
    : role_(o.role_),
      app_(std::move(o.app_)),
      stream_key_(std::move(o.stream_key_)),
      held_(std::exchange(o.held_, false)) {}

Seat& Seat::operator=(Seat&& o) noexcept {
  if (this != &o) {
    release();
    role_ = o.role_;
    app_ = std::move(o.app_);
    stream_key_ = std::move(o.stream_key_);
    held_ = std::exchange(o.held_, false);
  }
  return *this;
}

bool Seat::take(AudienceRole role, const std::string& app, const std::string& stream, const config::AppLimits& limits,
                std::string& why) {
  release();
  Counts& c = counts();
  std::string stream_key = app + "/" + stream;
  std::lock_guard lock(c.mutex);
  if (role == AudienceRole::Publisher) {
    uint32_t& n = c.app_publishers[app];
    if (limits.publishers != 0 && n >= limits.publishers) {
      why = "apps." + app + ".limits.publishers=" + std::to_string(limits.publishers);
      if (n == 0) c.app_publishers.erase(app);
      return false;
    }
    ++n;
  } else {
    uint32_t& a = c.app_players[app];
    uint32_t& s = c.stream_players[stream_key];
    const bool app_full = limits.players != 0 && a >= limits.players;
    const bool stream_full = limits.players_per_stream != 0 && s >= limits.players_per_stream;
    if (app_full || stream_full) {
      why = app_full ? "apps." + app + ".limits.players=" + std::to_string(limits.players)
                     : "apps." + app + ".limits.players_per_stream=" + std::to_string(limits.players_per_stream);
      if (a == 0) c.app_players.erase(app);
      if (s == 0) c.stream_players.erase(stream_key);
      return false;
    }
    ++a;
    ++s;
  }
  role_ = role;
  app_ = app;
  stream_key_ = std::move(stream_key);
  held_ = true;
  return true;
}

void Seat::release() {
  if (!held_) return;
  held_ = false;
  Counts& c = counts();
  std::lock_guard lock(c.mutex);
  if (role_ == AudienceRole::Publisher) {
    decrement(c.app_publishers, app_);
  } else {
    decrement(c.app_players, app_);
    decrement(c.stream_players, stream_key_);
  }
}

}  // namespace sluice::server
