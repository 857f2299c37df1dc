// server/http/small_file_cache.hpp: freshness (kValidMs), revalidation, the keys, the least
// recently used eviction under the entry and byte bounds, and the idle sweep.
#include <doctest/doctest.h>

#include <string>

#include "server/http/small_file_cache.hpp"

using namespace sluice;
using namespace sluice::server;

namespace {

constexpr const char* kRoot = "/srv/media";

CachedFile file_of(const std::string& bytes, int64_t mtime_ns = 1, ino_t ino = 7) {
  CachedFile f;
  f.id = {1, ino, bytes.size(), mtime_ns, mtime_ns};
  f.body = Slice::copy_of(bytes);
  return f;
}

std::string text(const CachedFile* f) {
  return f ? std::string(reinterpret_cast<const char*>(f->body.data()), f->body.size()) : "(none)";
}

}  // namespace

TEST_CASE("an entry is fresh for kValidMs after it was read, then needs a check") {
  SmallFileCache c;
  CHECK(c.find_fresh(kRoot, true, "a.mp4", 1000) == nullptr);
  REQUIRE(c.put(kRoot, true, "a.mp4", file_of("hello"), 1000));
  CHECK(text(c.find_fresh(kRoot, true, "a.mp4", 1000)) == "hello");
  CHECK(text(c.find_fresh(kRoot, true, "a.mp4", 1000 + SmallFileCache::kValidMs - 1)) == "hello");
  CHECK(c.find_fresh(kRoot, true, "a.mp4", 1000 + SmallFileCache::kValidMs) == nullptr);
  // Stale, it is still there for the check: its identity and bytes.
  REQUIRE(c.find(kRoot, true, "a.mp4") != nullptr);
  CHECK(c.find(kRoot, true, "a.mp4")->id.size == 5);
  // A clock that went backwards never makes an entry fresh for longer.
  CHECK(c.find_fresh(kRoot, true, "a.mp4", 500) == nullptr);
}

TEST_CASE("a check that finds the same file makes the entry fresh again; a changed file does not") {
  SmallFileCache c;
  REQUIRE(c.put(kRoot, true, "a.mp4", file_of("v1", 10), 0));
  const uint64_t later = 5 * SmallFileCache::kValidMs;
  CHECK(c.find_fresh(kRoot, true, "a.mp4", later) == nullptr);
  FileIdentity same = c.find(kRoot, true, "a.mp4")->id;
  CHECK(c.revalidated(kRoot, true, "a.mp4", same, later));
  CHECK(text(c.find_fresh(kRoot, true, "a.mp4", later + 1)) == "v1");

  // Rewritten on disk (new mtime): the check reads it again and replaces the entry.
  FileIdentity changed = same;
  changed.mtime_ns = 11;
  CHECK_FALSE(c.revalidated(kRoot, true, "a.mp4", changed, later + SmallFileCache::kValidMs));
  REQUIRE(c.put(kRoot, true, "a.mp4", file_of("v2!", 11), later + SmallFileCache::kValidMs));
  CHECK(text(c.find_fresh(kRoot, true, "a.mp4", later + SmallFileCache::kValidMs)) == "v2!");
  CHECK(c.entries() == 1);

  // Removed on disk: the check erases it.
  c.erase(kRoot, true, "a.mp4");
  CHECK(c.find(kRoot, true, "a.mp4") == nullptr);
  CHECK(c.entries() == 0);
  CHECK(c.bytes() == 0);
  CHECK_FALSE(c.revalidated(kRoot, true, "a.mp4", changed, later));
}

TEST_CASE("checks that finish out of order: the one that started later wins") {
  SmallFileCache c;
  REQUIRE(c.put(kRoot, true, "a.mp4", file_of("v2", 2), 2000));
  // A check that started at 1500 found v1 and finishes now: older news, refused.
  CHECK_FALSE(c.put(kRoot, true, "a.mp4", file_of("v1", 1), 1500));
  CHECK(text(c.find(kRoot, true, "a.mp4")) == "v2");
  // Nor does an old check of the same version move the entry's check time back.
  FileIdentity v2 = c.find(kRoot, true, "a.mp4")->id;
  CHECK(c.revalidated(kRoot, true, "a.mp4", v2, 1800));
  CHECK(c.find_fresh(kRoot, true, "a.mp4", 2000 + SmallFileCache::kValidMs - 1) != nullptr);
  // A later check replaces it.
  CHECK(c.put(kRoot, true, "a.mp4", file_of("v3", 3), 2500));
  CHECK(text(c.find(kRoot, true, "a.mp4")) == "v3");
}

TEST_CASE("the key is the root, follow_symlinks and the path together") {
  SmallFileCache c;
  REQUIRE(c.put(kRoot, true, "a.mp4", file_of("follow"), 0));
  CHECK(c.find_fresh(kRoot, false, "a.mp4", 0) == nullptr);
  CHECK(c.find_fresh("/srv/other", true, "a.mp4", 0) == nullptr);
  CHECK(c.find_fresh(kRoot, true, "b.mp4", 0) == nullptr);
  // No two (root, path) pairs run into the same key.
  CHECK(c.find_fresh("/srv/media/a", true, ".mp4", 0) == nullptr);
  REQUIRE(c.put(kRoot, false, "a.mp4", file_of("strict"), 0));
  CHECK(text(c.find_fresh(kRoot, true, "a.mp4", 0)) == "follow");
  CHECK(text(c.find_fresh(kRoot, false, "a.mp4", 0)) == "strict");
  CHECK(c.entries() == 2);
}

TEST_CASE("too large, or a body that is not the whole file: not cached") {
  SmallFileCache c;
  CHECK_FALSE(c.put(kRoot, true, "big.mp4", file_of(std::string(SmallFileCache::kMaxFileBytes + 1, 'x')), 0));
  CHECK(c.put(kRoot, true, "max.mp4", file_of(std::string(SmallFileCache::kMaxFileBytes, 'x')), 0));
  CachedFile short_read = file_of("abc");
  short_read.id.size = 10;
  CHECK_FALSE(c.put(kRoot, true, "short.mp4", std::move(short_read), 0));
  CHECK(c.entries() == 1);
}

TEST_CASE("the entry bound: the least recently used entry goes first") {
  SmallFileCache c;
  for (size_t i = 0; i < SmallFileCache::kMaxEntries; ++i) {
    REQUIRE(c.put(kRoot, true, std::to_string(i) + ".mp4", file_of("x"), 0));
  }
  CHECK(c.entries() == SmallFileCache::kMaxEntries);
  // 0.mp4 is used: 1.mp4 is now the least recently used.
  REQUIRE(c.find_fresh(kRoot, true, "0.mp4", 1) != nullptr);
  REQUIRE(c.put(kRoot, true, "new.mp4", file_of("y"), 1));
  CHECK(c.entries() == SmallFileCache::kMaxEntries);
  CHECK(c.find(kRoot, true, "0.mp4") != nullptr);
  CHECK(c.find(kRoot, true, "1.mp4") == nullptr);
  CHECK(c.find(kRoot, true, "2.mp4") != nullptr);
  CHECK(c.find(kRoot, true, "new.mp4") != nullptr);
}

TEST_CASE("the byte bound: bodies and keys together stay under kMaxTotalBytes") {
  SmallFileCache c;
  const std::string body(SmallFileCache::kMaxFileBytes, 'z');
  const size_t fit = SmallFileCache::kMaxTotalBytes / (body.size() + 64);
  for (size_t i = 0; i < fit + 20; ++i) {
    REQUIRE(c.put(kRoot, true, "f" + std::to_string(i) + ".mp4", file_of(body), 0));
    CHECK(c.bytes() <= SmallFileCache::kMaxTotalBytes);
  }
  CHECK(c.entries() < fit + 20);
  CHECK(c.entries() >= fit - 1);
  // The newest are kept, the oldest went.
  CHECK(c.find(kRoot, true, "f" + std::to_string(fit + 19) + ".mp4") != nullptr);
  CHECK(c.find(kRoot, true, "f0.mp4") == nullptr);
  // Everything removed: nothing is counted any more.
  for (size_t i = 0; i < fit + 20; ++i) c.erase(kRoot, true, "f" + std::to_string(i) + ".mp4");
  CHECK(c.entries() == 0);
  CHECK(c.bytes() == 0);
}

TEST_CASE("a body in flight outlives its entry") {
  SmallFileCache c;
  REQUIRE(c.put(kRoot, true, "a.mp4", file_of("keep me"), 0));
  Slice sent = c.find_fresh(kRoot, true, "a.mp4", 0)->body.share(0, 4);
  c.erase(kRoot, true, "a.mp4");
  CHECK(std::string(reinterpret_cast<const char*>(sent.data()), sent.size()) == "keep");
}

TEST_CASE("the sweep drops entries nobody asked for in kIdleMs") {
  SmallFileCache c;
  REQUIRE(c.put(kRoot, true, "old.mp4", file_of("o"), 0));
  REQUIRE(c.put(kRoot, true, "used.mp4", file_of("u"), 0));
  const uint64_t t = SmallFileCache::kIdleMs - 10;
  // used.mp4 is asked for (after a check) shortly before the sweep.
  FileIdentity id = c.find(kRoot, true, "used.mp4")->id;
  REQUIRE(c.revalidated(kRoot, true, "used.mp4", id, t));
  REQUIRE(c.find_fresh(kRoot, true, "used.mp4", t) != nullptr);
  c.sweep(SmallFileCache::kIdleMs);
  CHECK(c.find(kRoot, true, "old.mp4") == nullptr);
  CHECK(c.find(kRoot, true, "used.mp4") != nullptr);
  c.sweep(t + SmallFileCache::kIdleMs);
  CHECK(c.entries() == 0);
}

TEST_CASE("missing names: 404 for kValidMs without a check, then checked again") {
  SmallFileCache c;
  CHECK(c.known_missing(kRoot, true, "gone.mp4", 0) == nullptr);
  c.put_missing(kRoot, true, "gone.mp4", "no such file", 1000);
  REQUIRE(c.known_missing(kRoot, true, "gone.mp4", 1000) != nullptr);
  CHECK(*c.known_missing(kRoot, true, "gone.mp4", 1000) == "no such file");
  CHECK(c.known_missing(kRoot, false, "gone.mp4", 1000) == nullptr);
  CHECK(c.known_missing(kRoot, true, "gone.mp4", 1000 + SmallFileCache::kValidMs) == nullptr);
  // The file appears: a later check stores it, and the name is no longer missing.
  REQUIRE(c.put(kRoot, true, "gone.mp4", file_of("here"), 1000 + SmallFileCache::kValidMs));
  CHECK(c.known_missing(kRoot, true, "gone.mp4", 1000 + SmallFileCache::kValidMs) == nullptr);
  CHECK(c.missing_entries() == 0);
  // It is removed again: the check drops the file.
  c.put_missing(kRoot, true, "gone.mp4", "no such file", 3000);
  CHECK(c.find(kRoot, true, "gone.mp4") == nullptr);
  CHECK(c.entries() == 0);
  // An older check that found it missing does not drop what a later one stored.
  REQUIRE(c.put(kRoot, true, "back.mp4", file_of("b"), 5000));
  c.put_missing(kRoot, true, "back.mp4", "no such file", 4000);
  CHECK(c.find(kRoot, true, "back.mp4") != nullptr);
  CHECK(c.known_missing(kRoot, true, "back.mp4", 5000) == nullptr);
}

TEST_CASE("missing names are bounded apart from the files, and swept") {
  SmallFileCache c;
  REQUIRE(c.put(kRoot, true, "real.mp4", file_of("r"), 0));
  for (size_t i = 0; i < 10 * SmallFileCache::kMaxMissing; ++i) {
    c.put_missing(kRoot, true, "random" + std::to_string(i) + ".mp4", "no such file", 0);
    CHECK(c.missing_entries() <= SmallFileCache::kMaxMissing);
  }
  CHECK(c.find_fresh(kRoot, true, "real.mp4", 0) != nullptr);  // a flood of names never evicts a file
  c.sweep(SmallFileCache::kValidMs);
  CHECK(c.missing_entries() == 0);
}

TEST_CASE("forget: an upload replaced the file, in both follow_symlinks variants") {
  SmallFileCache c;
  REQUIRE(c.put(kRoot, true, "up.mp4", file_of("old"), 0));
  REQUIRE(c.put(kRoot, false, "up.mp4", file_of("old"), 0));
  c.put_missing(kRoot, true, "new.mp4", "no such file", 0);
  c.forget(kRoot, "up.mp4");
  c.forget(kRoot, "new.mp4");
  CHECK(c.entries() == 0);
  CHECK(c.missing_entries() == 0);
}
