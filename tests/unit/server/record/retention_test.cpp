// server/record/retention.hpp: which finished recordings record.keep removes, and which files
// it never touches.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>

#include "server/record/retention.hpp"
#include "unit/media/tool_files.hpp"

using namespace sluice::server;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

constexpr int64_t kNow = 1'800'000'000;

std::vector<std::string> paths(const std::vector<Expiry>& e, const char* reason = nullptr) {
  std::vector<std::string> out;
  for (const auto& x : e) {
    if (!reason || std::string(x.reason) == reason) out.push_back(x.path);
  }
  return out;
}

void touch(const std::string& path, size_t bytes, int64_t mtime) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path) << std::string(bytes, 'x');
  struct timespec times[2] = {{static_cast<time_t>(mtime), 0}, {static_cast<time_t>(mtime), 0}};
  REQUIRE(::utimensat(AT_FDCWD, path.c_str(), times, 0) == 0);
}

}  // namespace

TEST_CASE("age first, then the oldest while the total exceeds the size bound") {
  std::vector<RecordingOnDisk> files = {
      {"d", 100, kNow - 10},
      {"a", 100, kNow - 4000},
      {"c", 100, kNow - 100},
      {"b", 100, kNow - 3000},
  };
  auto by_age = plan_expiry(files, kNow, {"/r", 3600s, 0});
  CHECK(paths(by_age) == std::vector<std::string>{"a"});
  auto both = plan_expiry(files, kNow, {"/r", 3600s, 150});
  CHECK(paths(both, "age") == std::vector<std::string>{"a"});
  // b, c, d are 300 bytes: b and c go, d (the newest) stays.
  CHECK(paths(both, "size") == std::vector<std::string>{"b", "c"});
  CHECK(plan_expiry(files, kNow, {"/r", 0ms, 0}).empty());
  CHECK(plan_expiry(files, kNow, {"/r", 0ms, 400}).empty());
}

TEST_CASE("apps sharing a directory share the strictest rule; rules without limits are dropped") {
  auto merged = merge_retention_rules({{"/r", 3600s, 0}, {"/r", 0ms, 1000}, {"/r", 60s, 5000}, {"/other", 0ms, 0}});
  REQUIRE(merged.size() == 1);
  CHECK(merged[0].dir == "/r");
  CHECK(merged[0].age == 60s);
  CHECK(merged[0].bytes == 1000);
}

TEST_CASE("only finished .flv and .mp4 files are listed: not .part, not one being finished, not symlinks") {
  sluice::test::TempDir dir("sluice-retention");
  const std::string root = dir.path.string();
  touch(root + "/live/a.flv", 10, kNow - 100);
  touch(root + "/live/2026/b.mp4", 20, kNow - 100);
  touch(root + "/live/c.flv.part", 30, kNow - 100);
  touch(root + "/live/d.flv", 40, kNow - 100);
  touch(root + "/live/d.flv.part", 40, kNow - 100);  // d.flv is being finished
  touch(root + "/live/notes.txt", 5, kNow - 100);
  fs::create_symlink("/etc/hostname", root + "/live/e.flv");
  auto listed = list_recordings(root);
  std::vector<std::string> names;
  for (const auto& f : listed) names.push_back(fs::relative(f.path, root).string());
  std::sort(names.begin(), names.end());
  CHECK(names == std::vector<std::string>{"live/2026/b.mp4", "live/a.flv"});
}
