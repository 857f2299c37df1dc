// For unit tests that run ffmpeg/ffprobe on files they write (tests/unit/media/vod/ffmpeg_test.cpp,
// tests/unit/media/record/ffprobe_test.cpp): run a shell command, a temporary directory, whole-file
// reads and writes.
#pragma once

#include <doctest/doctest.h>
#include <stdlib.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace sluice::test {

// The command's stdout, or nullopt when it could not run or exited non-zero.
inline std::optional<std::string> run(const std::string& cmd) {
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return std::nullopt;
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  if (pclose(p) != 0) return std::nullopt;
  return out;
}

// Whether a test that needs something this machine lacks (`have` false) stops here. Outside CI it
// is skipped with a MESSAGE; in CI (SLUICE_CI or CI set) everything is installed, so it fails.
inline bool skipped_without(bool have, const std::string& what) {
  if (have) return false;
  if (getenv("SLUICE_CI") || getenv("CI")) {
    FAIL_CHECK(what << " missing in CI (tools/install-deps.sh test installs it)");
  } else {
    MESSAGE(what << " missing: skipped");
  }
  return true;
}

// Whether ffmpeg and ffprobe are installed.
inline bool have_ffmpeg_tools() {
  static const bool ok = run("ffmpeg -version >/dev/null 2>&1 && ffprobe -version >/dev/null 2>&1").has_value();
  return ok;
}

// A fresh /tmp/<prefix>-XXXXXX, removed with everything in it.
struct TempDir {
  std::filesystem::path path;
  explicit TempDir(const std::string& prefix) {
    std::string tmpl = "/tmp/" + prefix + "-XXXXXX";
    if (mkdtemp(tmpl.data())) path = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    if (!path.empty()) std::filesystem::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string file(const std::string& name) const { return (path / name).string(); }
};

inline void write_file(const std::string& path, std::span<const uint8_t> bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  REQUIRE(out.good());
}

inline std::vector<uint8_t> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

}  // namespace sluice::test
