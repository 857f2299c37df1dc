// server/vod/path.hpp: the confinement rules for VOD names (nothing outside the media root).
#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "server/vod/path.hpp"

using namespace sluice;
using namespace sluice::server;
namespace fs = std::filesystem;

TEST_CASE("names that cannot name a file under the root are refused before any lookup") {
  CHECK(vod_relative_path("movie").ok());
  CHECK(vod_relative_path("mp4:sub/clip.mp4").ok());
  for (const char* bad : {"", "..", "../etc/passwd", "a/../../b", "/etc/passwd", "a\\b", "a//b", "./a", "a/./b",
                          "a\x01", "mp4:../x.mp4"}) {
    CAPTURE(bad);
    auto r = vod_relative_path(bad);
    CHECK_FALSE(r.ok());
    if (!r.ok()) CHECK(r.error().code == Errc::NotFound);
  }
}

TEST_CASE("resolve_vod_path stays inside the root, also through symlinks") {
  fs::path base = fs::temp_directory_path() / ("sluice-path-test-" + std::to_string(::getpid()));
  fs::remove_all(base);
  fs::create_directories(base / "root" / "sub");
  fs::create_directories(base / "outside");
  std::ofstream(base / "root" / "sub" / "clip.flv") << "FLV";
  std::ofstream(base / "outside" / "secret.flv") << "FLV";
  fs::create_directory_symlink(base / "outside", base / "root" / "escape");
  fs::create_symlink(base / "outside" / "secret.flv", base / "root" / "link.flv");
  fs::create_symlink(base / "root" / "sub" / "clip.flv", base / "root" / "inner.flv");
  const std::string root = (base / "root").string();

  auto ok = resolve_vod_path(root, "sub/clip");
  REQUIRE(ok.ok());
  CHECK(ok->container == VodContainer::Flv);
  CHECK(ok->path == fs::canonical(base / "root" / "sub" / "clip.flv").string());
  // A symlink that stays inside the root is followed.
  CHECK(resolve_vod_path(root, "inner").ok());
  // A symlinked folder or file that leaves the root is refused, as is a name that is not there.
  CHECK_FALSE(resolve_vod_path(root, "escape/secret").ok());
  CHECK_FALSE(resolve_vod_path(root, "link").ok());
  CHECK_FALSE(resolve_vod_path(root, "missing").ok());
  fs::remove_all(base);
}
