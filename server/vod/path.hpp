// VOD stream names ("movie", "flv:movie", "mp4:movie.mp4", "sub/clip.mp4") to relative file
// paths inside an app's media root, and the split of such a path into the components a confined
// open walks (confined_open.hpp). No I/O here: unit-tested and fuzzed (tests/fuzz/vod_path_fuzz.cpp).
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.hpp"

namespace sluice::server {

// A file's modification time in nanoseconds: part of its identity for ETags and index refreshes.
inline int64_t file_mtime_ns(const struct stat& st) {
  return int64_t(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
}

enum class VodContainer { Flv, Mp4 };

// Names longer than this are refused whatever the app allows (vod apps' name_max_bytes is
// checked against it): it keeps a resolved path well under PATH_MAX.
inline constexpr size_t kVodNameHardLimit = 4000;
// The longest path component a file system takes (NAME_MAX on Linux).
inline constexpr size_t kMaxComponentBytes = 255;

// The file a stream name names, relative to the root, without touching the file system.
// Errc::NotFound for names that cannot name a file under the root.
Result<std::string> vod_relative_path(std::string_view stream_name);

// .flv plays as FLV, every other known extension as MP4 (rel as vod_relative_path returns it).
VodContainer vod_container_of(std::string_view rel);

// The components of a relative path, in order, each a plain file or folder name: no empty, "."
// or ".." component, no NUL, none longer than kMaxComponentBytes, not absolute. The views point
// into `rel`. Errc::NotFound otherwise (the confined open walks only what this returns).
Result<std::vector<std::string_view>> confined_components(std::string_view rel);

}  // namespace sluice::server
