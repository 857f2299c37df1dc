#include "server/live/worker_mesh.hpp"

#include <algorithm>

namespace sluice::server {

EventQueue::EventQueue() : head_(&stub_), tail_(&stub_) {}

EventQueue::~EventQueue() {
  while (pop()) {
  }
}

void EventQueue::push_node(MeshEvent* n) {
  n->next.store(nullptr, std::memory_order_relaxed);
  MeshEvent* prev = head_.exchange(n, std::memory_order_acq_rel);
  prev->next.store(n, std::memory_order_release);
}

void EventQueue::push(std::unique_ptr<MeshEvent> e) { push_node(e.release()); }

std::unique_ptr<MeshEvent> EventQueue::pop() {
  MeshEvent* tail = tail_;
  MeshEvent* next = tail->next.load(std::memory_order_acquire);
  if (tail == &stub_) {
    if (!next) return nullptr;
    tail_ = next;
    tail = next;
    next = next->next.load(std::memory_order_acquire);
  }
  if (next) {
    tail_ = next;
    return std::unique_ptr<MeshEvent>(tail);
  }
  if (tail != head_.load(std::memory_order_acquire)) return nullptr;  // a push is half done
  push_node(&stub_);
  next = tail->next.load(std::memory_order_acquire);
  if (next) {
    tail_ = next;
    return std::unique_ptr<MeshEvent>(tail);
  }
  return nullptr;
}

StreamDirectory::Entry& StreamDirectory::entry(const std::string& key) {
  Entry& e = entries_[key];
  if (e.interest.empty()) e.interest.assign(workers_, false);
  return e;
}

void StreamDirectory::erase_if_empty(const std::string& key) {
  auto it = entries_.find(key);
  if (it == entries_.end()) return;
  const Entry& e = it->second;
  if (e.owner == kNoOwner && std::none_of(e.interest.begin(), e.interest.end(), [](bool b) { return b; }))
    entries_.erase(it);
}

bool StreamDirectory::claim(const std::string& key, uint32_t worker, std::vector<uint32_t>& interested) {
  std::lock_guard lock(mutex_);
  Entry& e = entry(key);
  if (e.owner != kNoOwner && e.owner != static_cast<int>(worker)) return false;
  e.owner = static_cast<int>(worker);
  interested.clear();
  for (uint32_t w = 0; w < e.interest.size(); ++w) {
    if (e.interest[w] && w != worker) interested.push_back(w);
  }
  return true;
}

void StreamDirectory::release(const std::string& key, uint32_t worker) {
  std::lock_guard lock(mutex_);
  auto it = entries_.find(key);
  if (it == entries_.end() || it->second.owner != static_cast<int>(worker)) return;
  it->second.owner = kNoOwner;
  erase_if_empty(key);
}

int StreamDirectory::add_interest(const std::string& key, uint32_t worker) {
  std::lock_guard lock(mutex_);
  Entry& e = entry(key);
  e.interest[worker] = true;
  return e.owner;
}

bool StreamDirectory::add_interest_within(const std::string& key, uint32_t worker, size_t max, int& owner) {
  std::lock_guard lock(mutex_);
  if (max != 0 && entries_.size() >= max && entries_.find(key) == entries_.end()) return false;
  Entry& e = entry(key);
  e.interest[worker] = true;
  owner = e.owner;
  return true;
}

int StreamDirectory::remove_interest(const std::string& key, uint32_t worker) {
  std::lock_guard lock(mutex_);
  auto it = entries_.find(key);
  if (it == entries_.end()) return kNoOwner;
  it->second.interest[worker] = false;
  int owner = it->second.owner;
  erase_if_empty(key);
  return owner;
}

bool StreamDirectory::wanted_elsewhere(const std::string& key, uint32_t worker) {
  std::lock_guard lock(mutex_);
  auto it = entries_.find(key);
  if (it == entries_.end()) return false;
  const auto& interest = it->second.interest;
  for (uint32_t w = 0; w < interest.size(); ++w) {
    if (interest[w] && w != worker) return true;
  }
  return false;
}

int StreamDirectory::owner(const std::string& key) {
  std::lock_guard lock(mutex_);
  auto it = entries_.find(key);
  return it == entries_.end() ? kNoOwner : it->second.owner;
}

WorkerMesh::WorkerMesh(size_t workers) : directory_(workers), snapshots_(workers), clients_(workers) {
  for (size_t i = 0; i < workers; ++i) inboxes_.push_back(std::make_unique<Inbox>());
}

WorkerMesh::~WorkerMesh() = default;

void WorkerMesh::post(uint32_t to, std::unique_ptr<MeshEvent> e) {
  Inbox& in = *inboxes_[to];
  in.queue.push(std::move(e));
  if (in.wake) uv_async_send(in.wake);
}

void WorkerMesh::publish_snapshot(uint32_t worker, WorkerSnapshot s) { put(snapshots_, worker, std::move(s)); }

std::vector<std::shared_ptr<const WorkerSnapshot>> WorkerMesh::snapshots(uint32_t except) {
  return all_but(snapshots_, except);
}

void WorkerMesh::publish_clients(uint32_t worker, WorkerSnapshot rows) { put(clients_, worker, std::move(rows)); }

std::vector<std::shared_ptr<const WorkerSnapshot>> WorkerMesh::clients(uint32_t except) {
  return all_but(clients_, except);
}

void WorkerMesh::put(Slots& slots, uint32_t worker, WorkerSnapshot value) {
  // Built, and the old one freed (unless a reader still holds it), outside the lock.
  auto shared = std::make_shared<const WorkerSnapshot>(std::move(value));
  std::lock_guard lock(snapshot_mutex_);
  slots[worker].swap(shared);
}

WorkerMesh::Slots WorkerMesh::all_but(const Slots& slots, uint32_t except) {
  std::lock_guard lock(snapshot_mutex_);
  Slots out;
  for (uint32_t w = 0; w < slots.size(); ++w) {
    if (w != except && slots[w]) out.push_back(slots[w]);
  }
  return out;
}

}  // namespace sluice::server
