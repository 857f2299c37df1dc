#include "server/vod/confined_open.hpp"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>

#include "server/io/guard_counters.hpp"
#include "server/vod/path.hpp"

namespace sluice::server {

namespace {

// O_NONBLOCK: a FIFO named like a media file must not hang a pool thread in open().
constexpr int kFileFlags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY;
// A folder, held only as the anchor of *at() calls (an O_PATH descriptor serves as their dirfd).
constexpr int kDirFlags = O_PATH | O_DIRECTORY | O_CLOEXEC;
// openat2 fails with EAGAIN when a rename races its resolution: a few tries, then give up.
constexpr int kOpenat2Attempts = 4;

Error outside_root(std::string why) {
  GuardCounters::bump(GuardEvent::VodOutsideRoot);
  return Error(Errc::Rejected, std::move(why));
}

Error from_errno(int err) {
  switch (err) {
    case ENOENT:
    case ENOTDIR:
    case ENAMETOOLONG:
    case ELOOP:  // a symlink loop (refused symlinks are told apart before this)
      return Error(Errc::NotFound, "no such file");
    case EACCES:
    case EPERM: return Error(Errc::Io, std::string(kConfinedPermissionDenied));
    default: return Error(Errc::Io, std::string("cannot open: ") + std::strerror(err));
  }
}

bool is_symlink_at(int dirfd, const std::string& name) {
  struct stat st {};
  return ::fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode);
}

// The kernel's one-step confined open. -1 with errno set on failure.
int open_beneath(int rootfd, const std::string& rel, int flags, bool follow_symlinks) {
  struct open_how how {};
  how.flags = static_cast<uint64_t>(flags);
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS | (follow_symlinks ? 0 : RESOLVE_NO_SYMLINKS);
  long fd = -1;
  for (int attempt = 0; attempt < kOpenat2Attempts; ++attempt) {
    fd = ::syscall(SYS_openat2, rootfd, rel.c_str(), &how, sizeof how);
    if (fd >= 0 || errno != EAGAIN) break;
  }
  return static_cast<int>(fd);
}

bool openat2_unavailable(int err) {
  // ENOSYS: older kernel; EPERM: a seccomp filter; EINVAL/E2BIG: flags this kernel lacks.
  return err == ENOSYS || err == EPERM || err == EINVAL || err == E2BIG;
}

// No symlinks at all: every component is opened from its parent's descriptor with O_NOFOLLOW,
// and confined_components() guarantees none is "." or "..", so nothing can step out of the root.
Result<UniqueFd> walk_without_symlinks(int rootfd, std::string_view rel, int flags) {
  auto parts = confined_components(rel);
  if (!parts) return std::move(parts).error();
  UniqueFd dir;
  int at = rootfd;
  for (size_t i = 0; i < parts->size(); ++i) {
    std::string name((*parts)[i]);
    bool last = i + 1 == parts->size();
    // A symlink opened O_PATH|O_DIRECTORY|O_NOFOLLOW fails with ENOTDIR, never opens the link.
    int fd = ::openat(at, name.c_str(), (last ? flags : kDirFlags) | O_NOFOLLOW);
    if (fd < 0) {
      int err = errno;
      if ((err == ELOOP || err == ENOTDIR) && is_symlink_at(at, name))
        return outside_root("symlink refused (follow_symlinks: false)");
      return from_errno(err);
    }
    dir = UniqueFd(fd);
    at = fd;
  }
  return dir;
}

// Symlinks followed, then the opened descriptor itself is checked: what it refers to cannot
// change after the open, so there is no window between the check and the reads.
Result<UniqueFd> open_and_verify(int rootfd, const std::string& rel, int flags) {
  std::string root_path = descriptor_path(rootfd);
  if (root_path.empty()) return Error(Errc::Io, "cannot tell where the media root is (/proc)");
  if (root_path.back() != '/') root_path += '/';
  UniqueFd fd(::openat(rootfd, rel.c_str(), flags));
  if (!fd.valid()) return from_errno(errno);
  std::string real = descriptor_path(fd.get());
  // A folder may be the root itself (a symlink to "." inside it): real is then the root's path.
  if (real.compare(0, root_path.size(), root_path) != 0 && real + '/' != root_path)
    return outside_root("path leaves the media root");
  return fd;
}

// The open both public calls share: `rel` below `rootfd` with `flags`, by openat2 or a fallback.
Result<UniqueFd> open_confined(int rootfd, std::string_view rel, int flags, const ConfinedOpenOptions& options) {
  if (auto parts = confined_components(rel); !parts) return std::move(parts).error();
  const std::string rel_path(rel);
  int fd = options.use_openat2 ? open_beneath(rootfd, rel_path, flags, options.follow_symlinks) : -1;
  int err = options.use_openat2 ? errno : ENOSYS;
  if (fd >= 0) return UniqueFd(fd);
  if (!openat2_unavailable(err) && !(err == EXDEV && options.follow_symlinks)) {
    if (err == EXDEV) return outside_root("path leaves the media root");
    if (err == ELOOP && !options.follow_symlinks) return outside_root("symlink refused (follow_symlinks: false)");
    return from_errno(err);
  }
  // Also where RESOLVE_BENEATH said EXDEV: it refuses every absolute symlink, even one that points
  // back into the root; the descriptor check tells the two apart.
  if (options.follow_symlinks) return open_and_verify(rootfd, rel_path, flags);
  return walk_without_symlinks(rootfd, rel, flags);
}

}  // namespace

UniqueFd& UniqueFd::operator=(UniqueFd&& o) noexcept {
  if (this != &o) {
    reset();
    fd_ = o.release();
  }
  return *this;
}

void UniqueFd::reset() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

std::string descriptor_path(int fd) {
  char link[64];
  std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  char real[PATH_MAX];
  ssize_t n = ::readlink(link, real, sizeof real - 1);
  if (n <= 0) return {};
  return std::string(real, static_cast<size_t>(n));
}

Result<UniqueFd> open_media_root(const std::string& root) {
  // The root itself is the operator's: a symlink there is followed.
  UniqueFd rootfd(::open(root.c_str(), kDirFlags));
  if (!rootfd.valid()) return Error(Errc::NotFound, "media root does not exist: " + root);
  return rootfd;
}

Result<UniqueFd> confined_open_dir(int rootfd, std::string_view rel, const ConfinedOpenOptions& options) {
  if (rel.empty()) {
    UniqueFd fd(::fcntl(rootfd, F_DUPFD_CLOEXEC, 0));
    if (!fd.valid()) return from_errno(errno);
    return fd;
  }
  return open_confined(rootfd, rel, kDirFlags, options);
}

Result<ConfinedFile> confined_open(const std::string& root, std::string_view rel, const ConfinedOpenOptions& options) {
  if (auto parts = confined_components(rel); !parts) return std::move(parts).error();
  auto rootfd = open_media_root(root);
  if (!rootfd) return std::move(rootfd).error();
  Result<UniqueFd> opened = open_confined(rootfd->get(), rel, kFileFlags, options);
  if (!opened) return std::move(opened).error();
  ConfinedFile out;
  out.fd = std::move(*opened);
  if (::fstat(out.fd.get(), &out.st) != 0) return Error(Errc::Io, std::string("cannot stat: ") + std::strerror(errno));
  if (!S_ISREG(out.st.st_mode)) return Error(Errc::NotFound, "not a regular file");
  return out;
}

}  // namespace sluice::server
