// Push targets added through the API (POST /api/v1/relays/push), shared by every worker loop: the
// API changes the list on worker 0, each loop's RelayManager sees the generation change on its
// next tick and starts or stops its targets to match.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace sluice::server {

struct RuntimeTarget {
  std::string id;  // "r1", "r2", ...
  std::string app;
  std::string url;
  std::string key;                   // may be empty
  std::vector<std::string> streams;  // every stream of the app when empty
};

class RuntimeTargets {
 public:
  static RuntimeTargets& instance() {
    static RuntimeTargets targets;
    return targets;
  }
  // Bounds what the API can make every loop hold (a target per live stream of its app).
  static constexpr size_t kMaxTargets = 256;

  // The new target's id, or "" when kMaxTargets are there already.
  std::string add(RuntimeTarget t) {
    std::lock_guard lock(mutex_);
    if (list_.size() >= kMaxTargets) return "";
    t.id = "r" + std::to_string(++last_id_);
    list_.push_back(t);
    ++generation_;
    return t.id;
  }
  bool remove(const std::string& id) {
    std::lock_guard lock(mutex_);
    const size_t before = list_.size();
    std::erase_if(list_, [&](const RuntimeTarget& t) { return t.id == id; });
    if (list_.size() == before) return false;
    ++generation_;
    return true;
  }
  std::vector<RuntimeTarget> list() const {
    std::lock_guard lock(mutex_);
    return list_;
  }
  uint64_t generation() const { return generation_.load(std::memory_order_acquire); }

 private:
  mutable std::mutex mutex_;
  std::vector<RuntimeTarget> list_;
  uint64_t last_id_ = 0;
  std::atomic<uint64_t> generation_{0};
};

}  // namespace sluice::server
