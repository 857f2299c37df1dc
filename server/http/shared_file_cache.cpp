#include "server/http/shared_file_cache.hpp"

#include <utility>

namespace sluice::server {

std::optional<CachedFile> SharedFileCache::find_fresh(std::string_view root, bool follow_symlinks, std::string_view rel,
                                                      uint64_t now_ms) {
  std::lock_guard lock(mutex_);
  const CachedFile* f = cache_.find_fresh(root, follow_symlinks, rel, now_ms);
  if (f == nullptr) return std::nullopt;
  return copy(*f);
}

std::optional<CachedFile> SharedFileCache::find(std::string_view root, bool follow_symlinks, std::string_view rel) {
  std::lock_guard lock(mutex_);
  const CachedFile* f = cache_.find(root, follow_symlinks, rel);
  if (f == nullptr) return std::nullopt;
  return copy(*f);
}

std::optional<std::string> SharedFileCache::known_missing(std::string_view root, bool follow_symlinks,
                                                          std::string_view rel, uint64_t now_ms) {
  std::lock_guard lock(mutex_);
  const std::string* why = cache_.known_missing(root, follow_symlinks, rel, now_ms);
  if (why == nullptr) return std::nullopt;
  return *why;
}

bool SharedFileCache::put(std::string_view root, bool follow_symlinks, std::string_view rel, CachedFile file,
                          uint64_t now_ms) {
  std::lock_guard lock(mutex_);
  return cache_.put(root, follow_symlinks, rel, std::move(file), now_ms);
}

bool SharedFileCache::revalidated(std::string_view root, bool follow_symlinks, std::string_view rel,
                                  const FileIdentity& id, uint64_t now_ms) {
  std::lock_guard lock(mutex_);
  return cache_.revalidated(root, follow_symlinks, rel, id, now_ms);
}

void SharedFileCache::erase(std::string_view root, bool follow_symlinks, std::string_view rel) {
  std::lock_guard lock(mutex_);
  cache_.erase(root, follow_symlinks, rel);
}

void SharedFileCache::forget(std::string_view root, std::string_view rel) {
  std::lock_guard lock(mutex_);
  cache_.forget(root, rel);
}

void SharedFileCache::put_missing(std::string_view root, bool follow_symlinks, std::string_view rel, std::string why,
                                  uint64_t now_ms) {
  std::lock_guard lock(mutex_);
  cache_.put_missing(root, follow_symlinks, rel, std::move(why), now_ms);
}

void SharedFileCache::sweep(uint64_t now_ms) {
  std::lock_guard lock(mutex_);
  cache_.sweep(now_ms);
}

}  // namespace sluice::server
