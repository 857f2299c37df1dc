// SmallFileCache: small downloadable files kept in memory, one cache for every worker loop
// (behind SharedFileCache's lock, server/http/shared_file_cache.hpp), so that a
// popular small file is answered from memory with one write (head and body together) and no
// threadpool round trip at all: no open, fstat, sendfile and close per request.
//
// Rules (docs/http.md, "Small files from memory"):
//  1. Only what a successful confined_open (server/vod/confined_open.hpp) read below the root goes
//     in, keyed by the root, follow_symlinks and the relative path: nothing outside the root can be
//     served from here that could not be served from the disk.
//  2. An entry is fresh for kValidMs after it was read or last checked (like nginx's
//     open_file_cache_valid). After that, a request for it opens and fstats the file again off the
//     loop (server/http/file_lookup.hpp); an unchanged file (same device, inode, size, mtime and
//     ctime) keeps its bytes, a changed one is read again, a missing or refused one is dropped.
//     So a file changed, replaced or removed on disk is seen within kValidMs.
//  3. Bounded: files up to kMaxFileBytes, at most kMaxEntries entries and kMaxTotalBytes of bodies
//     and keys together; the least recently used entries go first. Entries nobody asked for in
//     kIdleMs are dropped by sweep() (HttpService's 1 s tick).
//  4. A name the check found missing (or out of the root) is remembered as missing for kValidMs
//     too, so a stream of requests for it is answered 404 without a threadpool job each. At most
//     kMaxMissing such names, kept apart from the files: requests for random names never push a
//     file out. A successful upload forgets its name at once (forget()).
// Fixed bounds, not configuration: they are small enough for any machine and large enough for the
// playlists, thumbnails and short clips this is for.
//
// No I/O and no libuv: unit-tested in tests/unit/server/http/small_file_cache_test.cpp.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "base/bytes.hpp"

namespace sluice::server {

struct HttpFileMeta;

// What tells a file apart from its earlier versions without reading it (from fstat).
struct FileIdentity {
  dev_t dev = 0;
  ino_t ino = 0;
  uint64_t size = 0;
  int64_t mtime_ns = 0;
  int64_t ctime_ns = 0;
  bool operator==(const FileIdentity&) const = default;
};

struct CachedFile {
  FileIdentity id;
  Slice body;                                // the whole file (id.size bytes), shared with the writes that send it
  std::shared_ptr<const HttpFileMeta> meta;  // its head lines (file_reply.hpp)
};

class SmallFileCache {
 public:
  static constexpr uint64_t kValidMs = 1000;
  static constexpr uint64_t kIdleMs = 60'000;
  static constexpr size_t kMaxFileBytes = 64 * 1024;
  static constexpr size_t kMaxEntries = 1024;
  static constexpr size_t kMaxTotalBytes = 16 * 1024 * 1024;
  static constexpr size_t kMaxMissing = 256;

  SmallFileCache() = default;
  SmallFileCache(const SmallFileCache&) = delete;
  SmallFileCache& operator=(const SmallFileCache&) = delete;

  // The entry if it was checked less than kValidMs ago (it becomes the most recently used), or
  // nullptr. The pointer is valid until the cache is next changed.
  const CachedFile* find_fresh(std::string_view root, bool follow_symlinks, std::string_view rel, uint64_t now_ms);
  // The entry whatever its age (to revalidate it), or nullptr.
  const CachedFile* find(std::string_view root, bool follow_symlinks, std::string_view rel);
  // Stores (or replaces) what a check that started at now_ms found. Refused (false) when the file is
  // too large for the cache, its body does not match its size, or the entry there now comes from a
  // check that started later (checks of one file may finish out of order).
  bool put(std::string_view root, bool follow_symlinks, std::string_view rel, CachedFile file, uint64_t now_ms);
  // The file was checked at now_ms and is still `id`: the entry is fresh again. False when the
  // entry is gone or is another version by now (nothing changes then).
  bool revalidated(std::string_view root, bool follow_symlinks, std::string_view rel, const FileIdentity& id,
                   uint64_t now_ms);
  // Drops the name, file or missing.
  void erase(std::string_view root, bool follow_symlinks, std::string_view rel);
  // Both follow_symlinks variants of the name, file or missing (an upload has just replaced it).
  void forget(std::string_view root, std::string_view rel);

  // Missing names: a check that started at now_ms found no servable file (why: for the log). The
  // file's entry, if any, goes, unless a later check put it there.
  void put_missing(std::string_view root, bool follow_symlinks, std::string_view rel, std::string why, uint64_t now_ms);
  // Why the name was found missing, if that was less than kValidMs ago; nullptr otherwise.
  const std::string* known_missing(std::string_view root, bool follow_symlinks, std::string_view rel, uint64_t now_ms);
  // Drops the entries not asked for in kIdleMs.
  void sweep(uint64_t now_ms);

  size_t entries() const { return index_.size(); }
  size_t missing_entries() const { return missing_.size(); }
  // Bodies and keys, the figure kMaxTotalBytes bounds.
  size_t bytes() const { return bytes_; }

 private:
  struct Entry {
    std::string key;
    CachedFile file;
    uint64_t checked_ms = 0;
    uint64_t used_ms = 0;
  };
  using List = std::list<Entry>;  // most recently used first

  // The key of (root, follow_symlinks, rel), built in scratch_ (no allocation once it has grown).
  std::string_view key_of(std::string_view root, bool follow_symlinks, std::string_view rel);
  static size_t cost(const Entry& e) { return e.key.size() + e.file.body.size(); }
  void remove(List::iterator it);

  struct Missing {
    std::string why;
    uint64_t checked_ms = 0;
  };
  static bool fresh(uint64_t checked_ms, uint64_t now_ms) {
    return now_ms >= checked_ms && now_ms - checked_ms < kValidMs;
  }

  List lru_;
  std::unordered_map<std::string_view, List::iterator> index_;  // views of the entries' keys
  size_t bytes_ = 0;
  std::unordered_map<std::string, Missing> missing_;
  std::string scratch_;
};

}  // namespace sluice::server
