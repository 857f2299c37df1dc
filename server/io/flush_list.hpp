// FlushList: the connections with pending output, flushed once per loop iteration (from a
// uv_check handle) so that everything queued during one iteration goes out as one batch each.
//
// Live media may instead be held a few milliseconds (add_delayed): every connection that got a
// frame since the hold began is flushed together when the owner's timer promotes them. A player
// then gets a few larger writes a second instead of one per message; on loopback and fast links
// the kernel's per-write cost, not the bytes, is most of what a media server spends.
//
// T needs `bool in_flush_list`, `bool in_delayed_list`, `std::string pending_close_reason`,
// `close(reason)` and `flush()`: in the server it is Flushable (flush_scheduler.hpp); a template so
// that the bookkeeping can be tested with a plain struct.
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
    c->in_delayed_list = false;  // its stale delayed_ entry is skipped by promote_delayed()
    pending_.push_back(c);
  }

  // Holds c until promote_delayed(); true when the hold list was empty (start the timer).
  bool add_delayed(T* c) {
    if (c->in_flush_list || c->in_delayed_list) return false;
    c->in_delayed_list = true;
    delayed_.push_back(c);
    return delayed_.size() == 1;
  }

  bool has_delayed() const { return !delayed_.empty(); }

  // The hold is over: everything held becomes pending for the next drain().
  void promote_delayed() {
    held_.swap(delayed_);
    for (T* c : held_) {
      if (c->in_delayed_list) add(c);
    }
    held_.clear();
  }

  void remove(T* c) {
    c->in_delayed_list = false;
    std::erase(delayed_, c);
    if (!c->in_flush_list) return;
    c->in_flush_list = false;
    std::erase(pending_, c);
    // drain() walks running_ by index: blank the slot instead of shifting the others.
    std::replace(running_.begin(), running_.end(), c, static_cast<T*>(nullptr));
  }

  // Flushing may queue more (closing a connection ends its streams): loop until quiet.
  // after_pass() runs after every pass (the server submits the writes the pass queued).
  void drain() {
    drain([] {});
  }
  template <typename AfterPass>
  void drain(AfterPass&& after_pass) {
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
      after_pass();
    }
  }

 private:
  std::vector<T*> pending_;
  std::vector<T*> running_;
  std::vector<T*> delayed_;
  std::vector<T*> held_;
};

}  // namespace sluice::server
