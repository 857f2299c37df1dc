// server/vod/confined_open.hpp: one-step opens below a media root, through openat2 and through
// both fallbacks (the component walk without symlinks, the descriptor check with them).
#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

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
