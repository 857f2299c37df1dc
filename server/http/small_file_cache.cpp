#include "server/http/small_file_cache.hpp"

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
  if (now_ms - e.checked_ms >= kValidMs || now_ms < e.checked_ms) return nullptr;
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
  if (auto it = index_.find(key); it != index_.end()) remove(it->second);
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
  it->second->checked_ms = now_ms;
  return true;
}

void SmallFileCache::erase(std::string_view root, bool follow_symlinks, std::string_view rel) {
  auto it = index_.find(key_of(root, follow_symlinks, rel));
  if (it != index_.end()) remove(it->second);
}

void SmallFileCache::sweep(uint64_t now_ms) {
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
