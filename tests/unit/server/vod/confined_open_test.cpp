// server/vod/confined_open.hpp: one-step opens below a media root, through openat2 and through
// both fallbacks (the component walk without symlinks, the descriptor check with them), of files
// and of the folders uploads write into.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include "server/io/guard_counters.hpp"
#include "server/vod/confined_open.hpp"

using namespace sluice;
using namespace sluice::server;
namespace fs = std::filesystem;

namespace {

struct Tree {
  fs::path base = fs::temp_directory_path() / ("sluice-confined-test-" + std::to_string(::getpid()));
  std::string root;
  Tree() {
    fs::remove_all(base);
    fs::create_directories(base / "root" / "sub");
    fs::create_directories(base / "outside");
    std::ofstream(base / "root" / "sub" / "clip.flv") << "INSIDE";
    std::ofstream(base / "outside" / "secret.flv") << "SECRET";
    fs::create_directory_symlink(base / "outside", base / "root" / "escape");
    fs::create_directory_symlink("../outside", base / "root" / "escape_relative");
    fs::create_symlink(base / "outside" / "secret.flv", base / "root" / "link.flv");
    fs::create_symlink(base / "root" / "sub" / "clip.flv", base / "root" / "inner_absolute.flv");
    fs::create_symlink("sub/clip.flv", base / "root" / "inner_relative.flv");
    fs::create_directory_symlink("sub", base / "root" / "subdir_link");
    fs::create_directory(base / "root" / "folder.flv");
    root = (base / "root").string();
  }
  ~Tree() { fs::remove_all(base); }
};

std::string content(const ConfinedFile& f) {
  char buf[16] = {};
  ssize_t n = ::pread(f.fd.get(), buf, sizeof buf, 0);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

}  // namespace

TEST_CASE("confined_open: inside files open, symlinks out of the root never do") {
  Tree t;
  for (bool openat2 : {true, false}) {
    CAPTURE(openat2);
    ConfinedOpenOptions follow{.follow_symlinks = true, .use_openat2 = openat2};
    ConfinedOpenOptions strict{.follow_symlinks = false, .use_openat2 = openat2};
    for (const auto& opts : {follow, strict}) {
      CAPTURE(opts.follow_symlinks);
      auto ok = confined_open(t.root, "sub/clip.flv", opts);
      REQUIRE(ok.ok());
      CHECK(content(*ok) == "INSIDE");
      CHECK(ok->st.st_size == 6);
      // Out of the root, absolute or relative, file or folder: refused and counted.
      for (const char* out : {"escape/secret.flv", "escape_relative/secret.flv", "link.flv"}) {
        CAPTURE(out);
        uint64_t before = GuardCounters::get(GuardEvent::VodOutsideRoot);
        auto r = confined_open(t.root, out, opts);
        REQUIRE_FALSE(r.ok());
        CHECK(r.error().code == Errc::Rejected);
        CHECK(GuardCounters::get(GuardEvent::VodOutsideRoot) == before + 1);
      }
      auto missing = confined_open(t.root, "sub/none.flv", opts);
      REQUIRE_FALSE(missing.ok());
      CHECK(missing.error().code == Errc::NotFound);
      auto folder = confined_open(t.root, "folder.flv", opts);
      REQUIRE_FALSE(folder.ok());
      CHECK(folder.error().code == Errc::NotFound);
      CHECK_FALSE(confined_open(t.root, "../outside/secret.flv", opts).ok());
      CHECK_FALSE(confined_open(t.root, "/etc/passwd", opts).ok());
    }
    // Symlinks that stay inside are followed only when allowed, absolute ones included.
    for (const char* in : {"inner_absolute.flv", "inner_relative.flv", "subdir_link/clip.flv"}) {
      CAPTURE(in);
      auto r = confined_open(t.root, in, follow);
      REQUIRE(r.ok());
      CHECK(content(*r) == "INSIDE");
      auto refused = confined_open(t.root, in, strict);
      REQUIRE_FALSE(refused.ok());
      CHECK(refused.error().code == Errc::Rejected);
    }
  }
  CHECK(confined_open((t.base / "nothing").string(), "sub/clip.flv", {}).error().code == Errc::NotFound);
}

TEST_CASE("confined_open_dir: a folder below the root, anchoring *at() calls that stay in it") {
  Tree t;
  fs::create_directory_symlink(".", fs::path(t.root) / "self");
  fs::create_directories(fs::path(t.root) / "sub" / "deeper");
  auto root = open_media_root(t.root);
  REQUIRE(root.ok());
  CHECK(open_media_root((t.base / "nothing").string()).error().code == Errc::NotFound);
  for (bool openat2 : {true, false}) {
    CAPTURE(openat2);
    ConfinedOpenOptions follow{.follow_symlinks = true, .use_openat2 = openat2};
    ConfinedOpenOptions strict{.follow_symlinks = false, .use_openat2 = openat2};
    for (const auto& opts : {follow, strict}) {
      CAPTURE(opts.follow_symlinks);
      for (const char* in : {"", "sub", "sub/deeper"}) {
        CAPTURE(in);
        auto dir = confined_open_dir(root->get(), in, opts);
        REQUIRE(dir.ok());
        CHECK(descriptor_path(dir->get()) == (in[0] ? t.root + "/" + in : t.root));
      }
      // Out of the root, absolute or relative: refused and counted.
      for (const char* out : {"escape", "escape_relative", "sub/../../outside"}) {
        CAPTURE(out);
        uint64_t before = GuardCounters::get(GuardEvent::VodOutsideRoot);
        auto r = confined_open_dir(root->get(), out, opts);
        REQUIRE_FALSE(r.ok());
        bool dotdot = std::string_view(out).find("..") != std::string_view::npos;
        CHECK(r.error().code == (dotdot ? Errc::NotFound : Errc::Rejected));
        CHECK(GuardCounters::get(GuardEvent::VodOutsideRoot) == before + (dotdot ? 0 : 1));
      }
      // Missing, or a file where a folder is expected: not found.
      for (const char* missing : {"none", "sub/none", "sub/clip.flv", "link.flv", "/tmp"}) {
        CAPTURE(missing);
        auto r = confined_open_dir(root->get(), missing, opts);
        REQUIRE_FALSE(r.ok());
        CHECK(r.error().code ==
              (opts.follow_symlinks || std::string_view(missing) != "link.flv" ? Errc::NotFound : Errc::Rejected));
      }
    }
    // A symlink that stays inside (even to the root itself) only when symlinks are followed.
    for (const char* in : {"subdir_link", "self"}) {
      CAPTURE(in);
      auto r = confined_open_dir(root->get(), in, follow);
      REQUIRE(r.ok());
      CHECK(descriptor_path(r->get()) == (std::string_view(in) == "self" ? t.root : t.root + "/sub"));
      auto refused = confined_open_dir(root->get(), in, strict);
      REQUIRE_FALSE(refused.ok());
      CHECK(refused.error().code == Errc::Rejected);
    }
  }
  // What the upload does with the descriptor: the folder is swapped for a symlink out of the root
  // after the open, and a file created relative to the descriptor still lands in the real folder.
  auto dir = confined_open_dir(root->get(), "sub", {});
  REQUIRE(dir.ok());
  fs::rename(fs::path(t.root) / "sub", fs::path(t.root) / "moved");
  fs::create_directory_symlink(t.base / "outside", fs::path(t.root) / "sub");
  int fd = ::openat(dir->get(), "new.flv", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
  REQUIRE(fd >= 0);
  ::close(fd);
  REQUIRE(::renameat(dir->get(), "new.flv", dir->get(), "final.flv") == 0);
  CHECK(fs::exists(fs::path(t.root) / "moved" / "final.flv"));
  CHECK_FALSE(fs::exists(t.base / "outside" / "final.flv"));
  CHECK_FALSE(fs::exists(t.base / "outside" / "new.flv"));
}
