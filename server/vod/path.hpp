// Resolving a VOD stream name ("movie", "flv:movie", "mp4:movie.mp4", "sub/clip.mp4") to a file
// inside an app's media root. Nothing outside the root is ever returned: "..", absolute paths,
// backslashes, control characters, percent-encoding tricks and symlinks that leave the root are
// refused.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "base/result.hpp"

namespace sluice::server {

// A file's modification time in nanoseconds: part of its identity for ETags and index refreshes.
inline int64_t file_mtime_ns(const struct stat& st) { return int64_t(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec; }

enum class VodContainer { Flv, Mp4 };

struct VodPath {
  std::string path;  // absolute, symlinks resolved, inside the root
  VodContainer container = VodContainer::Flv;
};

// The file a stream name names, without touching the file system (for logs and tests).
// Errc::NotFound for names that cannot name a file under the root.
Result<std::string> vod_relative_path(std::string_view stream_name);

// vod_relative_path() under root, resolved with realpath() and checked to stay inside the root.
// Errc::NotFound when the file does not exist or escapes the root.
Result<VodPath> resolve_vod_path(const std::string& root, std::string_view stream_name);

}  // namespace sluice::server
