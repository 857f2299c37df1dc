// FlushList: the connections with pending output, flushed once per loop iteration (from a
// uv_check handle) so that everything queued during one iteration goes out as one batch each.
// T needs `bool in_flush_list`, `std::string pending_close_reason`, `close(reason)` and `flush()`.
#pragma once

#include <algorithm>
#include <vector>

namespace sluice::server {

template <typename T>
class FlushList {
 public:
  void add(T* c) {
    if (c->in_flush_list) return;
    c->in_flush_list = true;
    pending_.push_back(c);
  }

  void remove(T* c) {
    if (!c->in_flush_list) return;
    c->in_flush_list = false;
    std::erase(pending_, c);
    // drain() walks running_ by index: blank the slot instead of shifting the others.
    std::replace(running_.begin(), running_.end(), c, static_cast<T*>(nullptr));
  }

  // Flushing may queue more (closing a connection ends its streams): loop until quiet.
  void drain() {
    while (!pending_.empty()) {
      running_.swap(pending_);
      for (size_t i = 0; i < running_.size(); ++i) {
        T* c = running_[i];
        if (!c) continue;
        c->in_flush_list = false;
        if (!c->pending_close_reason.empty()) {
          c->close(c->pending_close_reason);
        } else {
          c->flush();
        }
      }
      running_.clear();
    }
  }

 private:
  std::vector<T*> pending_;
  std::vector<T*> running_;
};

}  // namespace sluice::server
