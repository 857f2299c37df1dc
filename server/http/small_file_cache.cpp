#include "server/http/small_file_cache.hpp"

#include <algorithm>
#include <utility>

namespace sluice::server {

std::string_view SmallFileCache::key_of(std::string_view root, bool follow_symlinks, std::string_view rel) {
  // A NUL never occurs in a path, so the parts cannot run into each other.
  scratch_.clear();
  scratch_.append(root);
  scratch_.push_back('\0');
  scratch_.push_back(follow_symlinks ? 'f' : 'n');
  scratch_.push_back('\0');
  scratch_.append(rel);
  return scratch_;
}

const CachedFile* SmallFileCache::find_fresh(std::string_view root, bool follow_symlinks, std::string_view rel,
                                             uint64_t now_ms) {
  auto it = index_.find(key_of(root, follow_symlinks, rel));
  if (it == index_.end()) return nullptr;
  Entry& e = *it->second;
  if (!fresh(e.checked_ms, now_ms)) return nullptr;
  e.used_ms = now_ms;
  if (it->second != lru_.begin()) lru_.splice(lru_.begin(), lru_, it->second);
  return &e.file;
}

const CachedFile* SmallFileCache::find(std::string_view root, bool follow_symlinks, std::string_view rel) {
  auto it = index_.find(key_of(root, follow_symlinks, rel));
  return it == index_.end() ? nullptr : &it->second->file;
}

bool SmallFileCache::put(std::string_view root, bool follow_symlinks, std::string_view rel, CachedFile file,
                         uint64_t now_ms) {
  if (file.id.size > kMaxFileBytes || file.body.size() != file.id.size) return false;
  std::string_view key = key_of(root, follow_symlinks, rel);
  if (auto it = index_.find(key); it != index_.end()) {
    // Two checks of one file may finish out of order: the one that started later knows better.
    if (it->second->checked_ms > now_ms) return false;
    remove(it->second);
  }
  if (auto m = missing_.find(scratch_); m != missing_.end()) {
    if (m->second.checked_ms > now_ms) return false;
    missing_.erase(m);
  }
  lru_.push_front(Entry{std::string(key), std::move(file), now_ms, now_ms});
  List::iterator e = lru_.begin();
  index_.emplace(e->key, e);
  bytes_ += cost(*e);
  while (index_.size() > kMaxEntries || bytes_ > kMaxTotalBytes) remove(std::prev(lru_.end()));
  return true;
}

bool SmallFileCache::revalidated(std::string_view root, bool follow_symlinks, std::string_view rel,
                                 const FileIdentity& id, uint64_t now_ms) {
  auto it = index_.find(key_of(root, follow_symlinks, rel));
  if (it == index_.end() || !(it->second->file.id == id)) return false;
  it->second->checked_ms = std::max(it->second->checked_ms, now_ms);
  return true;
}

void SmallFileCache::erase(std::string_view root, bool follow_symlinks, std::string_view rel) {
  auto it = index_.find(key_of(root, follow_symlinks, rel));
  if (it != index_.end()) remove(it->second);
  missing_.erase(scratch_);
}

void SmallFileCache::forget(std::string_view root, std::string_view rel) {
  for (bool follow : {false, true}) erase(root, follow, rel);
}

void SmallFileCache::put_missing(std::string_view root, bool follow_symlinks, std::string_view rel, std::string why,
                                 uint64_t now_ms) {
  auto it = index_.find(key_of(root, follow_symlinks, rel));
  if (it != index_.end()) {
    if (it->second->checked_ms > now_ms) return;
    remove(it->second);
  }
  if (missing_.size() >= kMaxMissing && !missing_.count(scratch_)) {
    // Full: the stale names go; if every one is fresh (a flood of names), all of them.
    std::erase_if(missing_, [now_ms](const auto& m) { return !fresh(m.second.checked_ms, now_ms); });
    if (missing_.size() >= kMaxMissing) missing_.clear();
  }
  Missing& m = missing_[scratch_];
  if (m.checked_ms > now_ms) return;
  m.why = std::move(why);
  m.checked_ms = now_ms;
}

const std::string* SmallFileCache::known_missing(std::string_view root, bool follow_symlinks, std::string_view rel,
                                                 uint64_t now_ms) {
  if (missing_.empty()) return nullptr;
  key_of(root, follow_symlinks, rel);
  auto m = missing_.find(scratch_);
  return m != missing_.end() && fresh(m->second.checked_ms, now_ms) ? &m->second.why : nullptr;
}

void SmallFileCache::sweep(uint64_t now_ms) {
  std::erase_if(missing_, [now_ms](const auto& m) { return !fresh(m.second.checked_ms, now_ms); });
  // Least recently used last: stop at the first entry used recently enough.
  while (!lru_.empty() && now_ms - lru_.back().used_ms >= kIdleMs && now_ms >= lru_.back().used_ms) {
    remove(std::prev(lru_.end()));
  }
}

void SmallFileCache::remove(List::iterator it) {
  bytes_ -= cost(*it);
  index_.erase(std::string_view(it->key));
  lru_.erase(it);
}

}  // namespace sluice::server
