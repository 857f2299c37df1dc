// server/vod/path.hpp: the confinement rules for VOD names (nothing outside the media root).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "server/vod/path.hpp"

using namespace sluice;
using namespace sluice::server;

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

TEST_CASE("confined_components splits into plain names only") {
  auto ok = confined_components("a/b c/clip.mp4");
  REQUIRE(ok.ok());
  CHECK(*ok == std::vector<std::string_view>{"a", "b c", "clip.mp4"});
  for (std::string_view bad :
       {std::string_view(""), std::string_view("/a"), std::string_view("a//b"), std::string_view("a/"),
        std::string_view("./a"), std::string_view("a/../b"), std::string_view("a\0b", 3)}) {
    CAPTURE(bad);
    CHECK_FALSE(confined_components(bad).ok());
  }
  CHECK(confined_components(std::string(255, 'x')).ok());
  CHECK_FALSE(confined_components(std::string(256, 'x')).ok());
  // Whatever a stream name names can be walked.
  auto rel = vod_relative_path("mp4:sub/clip");
  REQUIRE(rel.ok());
  CHECK(confined_components(*rel).ok());
  CHECK(vod_container_of(*rel) == VodContainer::Mp4);
  CHECK(vod_container_of("x.FLV") == VodContainer::Flv);
}
