// FlushList: the connections with pending output, flushed once per loop iteration (from a
// uv_check handle) so that everything queued during one iteration goes out as one batch each.
//
// Live media may instead be held a few milliseconds (add_delayed): the held connections wait in
// one of `lanes()` lanes (by a slot each gets on its first hold) until the owner's timer promotes
// that lane. A player then gets a few larger writes a second instead of one per message; on
// loopback and fast links the kernel's per-write cost, not the bytes, is most of what a media
// server spends. Several lanes, promoted one after the other, spread a busy loop's players over
// the hold instead of writing all of them in one long pass (FlushScheduler says when).
//
// T needs `bool in_flush_list`, `bool in_delayed_list`, `uint32_t hold_slot` (0 until its first
// hold), `std::string pending_close_reason`, `close(reason)` and `flush()`: in the server it is
// Flushable (flush_scheduler.hpp); a template so that the bookkeeping can be tested with a plain
// struct.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
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

  // Holds c until its lane is promoted; true when nothing was held (start the timer).
  bool add_delayed(T* c) {
    if (c->in_flush_list || c->in_delayed_list) return false;
    if (c->hold_slot == 0) {
      if (++next_slot_ == 0) ++next_slot_;  // 0 means "no slot yet"
      c->hold_slot = next_slot_;
    }
    c->in_delayed_list = true;
    delayed_[lane_of(c)].push_back(c);
    return ++delayed_entries_ == 1;
  }

  bool has_delayed() const { return delayed_entries_ != 0; }
  size_t lanes() const { return delayed_.size(); }

  // Spreads the held connections over `n` lanes (at least 1) by their slots.
  void set_lanes(size_t n) {
    n = std::max<size_t>(n, 1);
    if (n == delayed_.size()) return;
    for (auto& lane : delayed_) held_.insert(held_.end(), lane.begin(), lane.end());
    delayed_.assign(n, {});
    for (T* c : held_) delayed_[lane_of(c)].push_back(c);
    held_.clear();
  }

  // Lane `lane`'s hold is over: what it holds becomes pending for the next drain(). Returns how
  // many connections that was.
  size_t promote_delayed(size_t lane) {
    held_.swap(delayed_[lane]);
    delayed_entries_ -= held_.size();
    size_t promoted = 0;
    for (T* c : held_) {
      if (!c->in_delayed_list) continue;  // flushed meanwhile (add() left its entry behind)
      add(c);
      ++promoted;
    }
    held_.clear();
    return promoted;
  }
  size_t promote_delayed() {
    size_t promoted = 0;
    for (size_t lane = 0; lane < delayed_.size(); ++lane) promoted += promote_delayed(lane);
    return promoted;
  }

  void remove(T* c) {
    c->in_delayed_list = false;
    // Every entry of c, a stale one too, is in its slot's lane: none may outlive it.
    if (c->hold_slot != 0) delayed_entries_ -= std::erase(delayed_[lane_of(c)], c);
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
  size_t lane_of(const T* c) const { return c->hold_slot % delayed_.size(); }

  std::vector<T*> pending_;
  std::vector<T*> running_;
  std::vector<std::vector<T*>> delayed_ = std::vector<std::vector<T*>>(1);
  size_t delayed_entries_ = 0;  // in all lanes, stale entries too
  std::vector<T*> held_;
  uint32_t next_slot_ = 0;
};

}  // namespace sluice::server
