// confined_open: opens a file below a media root in one step, so the file that was checked is the
// file that is read. Resolving a path and opening it again by name later leaves a window in which
// a folder inside the root can be swapped for a symlink to anywhere; here the kernel resolves and
// opens at once (openat2 with RESOLVE_BENEATH), or, where openat2 is refused (old kernel,
// seccomp), the components are walked from a descriptor of the root without following symlinks,
// or the opened descriptor itself is checked (/proc/self/fd). Every reader of a VOD file (RTMP
// play, getStreamLength, HTTP download) reads only the descriptor this returns; HTTP uploads
// (server/http/upload_responder.cpp) create, rename and remove their files only relative to a
// folder descriptor that confined_open_dir returns.
#pragma once

#include <sys/stat.h>

#include <string>
#include <string_view>

#include "base/result.hpp"

namespace sluice::server {

// An owned file descriptor, closed once.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& o) noexcept : fd_(o.release()) {}
  UniqueFd& operator=(UniqueFd&& o) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { reset(); }

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }
  void reset();

 private:
  int fd_ = -1;
};

struct ConfinedFile {
  UniqueFd fd;  // read-only, close-on-exec, a regular file below the root
  struct stat st {};
};

// The context of the Errc::Io error for EACCES/EPERM (HTTP answers it with 403).
inline constexpr std::string_view kConfinedPermissionDenied = "permission denied";

struct ConfinedOpenOptions {
  // false: no symlink anywhere below the root is followed. true: symlinks are followed as long as
  // the file they lead to is below the root.
  bool follow_symlinks = true;
  // false: never try openat2 (tests use it to exercise the fallbacks).
  bool use_openat2 = true;
};

// Opens `rel` (components as confined_components() accepts them) below the directory `root`.
// Errc::NotFound: no such regular file (or an invalid path); Errc::Rejected: the path leads out of
// the root, or through a symlink when follow_symlinks is false (counted as
// GuardEvent::VodOutsideRoot); Errc::Io: permission denied or another failure. Blocking: call it
// off the loop.
Result<ConfinedFile> confined_open(const std::string& root, std::string_view rel, const ConfinedOpenOptions& options);

// The media root as an O_PATH folder descriptor, the anchor of confined_open_dir. Errc::NotFound
// when it does not exist.
Result<UniqueFd> open_media_root(const std::string& root);

// Opens the folder `rel` below `rootfd` (an empty `rel`: the root itself) as an O_PATH descriptor,
// with confined_open's confinement and errors (Errc::NotFound also when a component is not a
// folder). Calls relative to it (openat, renameat, unlinkat) stay in that very folder whatever is
// later swapped along the path. Blocking: call it off the loop.
Result<UniqueFd> confined_open_dir(int rootfd, std::string_view rel, const ConfinedOpenOptions& options);

// The path a descriptor really refers to, from /proc (empty when /proc cannot tell).
std::string descriptor_path(int fd);

}  // namespace sluice::server
