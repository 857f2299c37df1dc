// server/http/file_lookup.hpp: a download's file found off the loop: small files read whole and
// closed, larger ones left open, an unchanged file not read again, a changed one read again, and
// nothing outside the root, whatever a symlink says.
#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "server/http/file_lookup.hpp"

using namespace sluice;
using namespace sluice::server;
namespace fs = std::filesystem;

namespace {

constexpr size_t kMax = 64;

struct Tree {
  fs::path base = fs::temp_directory_path() / ("sluice-file-lookup-test-" + std::to_string(::getpid()));
  std::string root;
  Tree() {
    fs::remove_all(base);
    fs::create_directories(base / "root");
    fs::create_directories(base / "outside");
    write("root/small.mp4", "small body");
    write("root/large.mp4", std::string(kMax + 1, 'L'));
    write("outside/secret.mp4", "SECRET");
    fs::create_symlink(base / "outside" / "secret.mp4", base / "root" / "out.mp4");
    fs::create_symlink("small.mp4", base / "root" / "in.mp4");
    root = (base / "root").string();
  }
  ~Tree() { fs::remove_all(base); }
  void write(const std::string& rel, const std::string& bytes) const { std::ofstream(base / rel) << bytes; }
};

std::string text(const Slice& s) { return std::string(reinterpret_cast<const char*>(s.data()), s.size()); }

}  // namespace

TEST_CASE("a small file is read whole and closed; a larger one stays open") {
  Tree t;
  FileLookup small = lookup_file(t.root, "small.mp4", true, kMax, std::nullopt);
  CHECK(small.status == 0);
  CHECK(small.fd == -1);
  CHECK(small.whole);
  CHECK_FALSE(small.unchanged);
  CHECK(small.id.size == 10);
  CHECK(text(small.body) == "small body");

  FileLookup large = lookup_file(t.root, "large.mp4", true, kMax, std::nullopt);
  CHECK(large.status == 0);
  REQUIRE(large.fd >= 0);
  CHECK(large.body.empty());
  CHECK(large.id.size == kMax + 1);
  ::close(large.fd);
}

TEST_CASE("the cached version is not read again; a rewritten or replaced file is") {
  Tree t;
  FileLookup first = lookup_file(t.root, "small.mp4", true, kMax, std::nullopt);
  REQUIRE(first.status == 0);
  FileLookup again = lookup_file(t.root, "small.mp4", true, kMax, first.id);
  CHECK(again.unchanged);
  CHECK(again.body.empty());
  CHECK(again.fd == -1);

  // Rewritten in place with the same size, and a later mtime (set here: two writes within one tick
  // of the file system's clock get the same one, which the ETag could not tell apart either).
  const fs::path small = t.base / "root" / "small.mp4";
  const auto before = fs::last_write_time(small);
  t.write("root/small.mp4", "SMALL BODY");
  fs::last_write_time(small, before + std::chrono::seconds(5));
  FileLookup rewritten = lookup_file(t.root, "small.mp4", true, kMax, first.id);
  CHECK_FALSE(rewritten.unchanged);
  CHECK(text(rewritten.body) == "SMALL BODY");

  // Replaced by a rename (an upload does that): another inode.
  t.write("root/new.tmp", "renamed in");
  fs::rename(t.base / "root" / "new.tmp", t.base / "root" / "small.mp4");
  FileLookup replaced = lookup_file(t.root, "small.mp4", true, kMax, rewritten.id);
  CHECK_FALSE(replaced.unchanged);
  CHECK(text(replaced.body) == "renamed in");
}

TEST_CASE("missing files and symlinks out of the root are 404, never read") {
  Tree t;
  CHECK(lookup_file(t.root, "none.mp4", true, kMax, std::nullopt).status == 404);
  for (bool follow : {true, false}) {
    FileLookup out = lookup_file(t.root, "out.mp4", follow, kMax, std::nullopt);
    CHECK(out.status == 404);
    CHECK(out.body.empty());
    CHECK(out.fd == -1);
  }
  CHECK(text(lookup_file(t.root, "in.mp4", true, kMax, std::nullopt).body) == "small body");
  CHECK(lookup_file(t.root, "in.mp4", false, kMax, std::nullopt).status == 404);

  // Removed: 404, even with a cached version to compare with.
  FileLookup first = lookup_file(t.root, "small.mp4", true, kMax, std::nullopt);
  fs::remove(t.base / "root" / "small.mp4");
  CHECK(lookup_file(t.root, "small.mp4", true, kMax, first.id).status == 404);
}
