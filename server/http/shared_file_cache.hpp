// SharedFileCache: the one SmallFileCache of the process (server/http/small_file_cache.hpp) behind a
// mutex, for every worker loop's HTTP side (docs/http.md, "HTTP on every loop"). One cache, not one
// per loop, so that all loops agree on a file: once any loop has served a file's new bytes (or its
// 404), no loop serves its old ones again, and an upload forgets the name for every loop at once.
// What a lookup finds is copied out under the lock (the body and head lines are reference-counted,
// so a copy is two counter increments): another loop may change the entry the moment it unlocks.
// The lock is held for a hash lookup and a list splice, never for I/O.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "server/http/small_file_cache.hpp"

namespace sluice::server {

class SharedFileCache {
 public:
  std::optional<CachedFile> find_fresh(std::string_view root, bool follow_symlinks, std::string_view rel,
                                       uint64_t now_ms);
  std::optional<CachedFile> find(std::string_view root, bool follow_symlinks, std::string_view rel);
  std::optional<std::string> known_missing(std::string_view root, bool follow_symlinks, std::string_view rel,
                                           uint64_t now_ms);
  bool put(std::string_view root, bool follow_symlinks, std::string_view rel, CachedFile file, uint64_t now_ms);
  bool revalidated(std::string_view root, bool follow_symlinks, std::string_view rel, const FileIdentity& id,
                   uint64_t now_ms);
  void erase(std::string_view root, bool follow_symlinks, std::string_view rel);
  void forget(std::string_view root, std::string_view rel);
  void put_missing(std::string_view root, bool follow_symlinks, std::string_view rel, std::string why, uint64_t now_ms);
  void sweep(uint64_t now_ms);

 private:
  static CachedFile copy(const CachedFile& f) { return CachedFile{f.id, f.body.share(), f.meta}; }

  std::mutex mutex_;
  SmallFileCache cache_;
};

}  // namespace sluice::server
