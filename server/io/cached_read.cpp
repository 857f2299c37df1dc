#include "server/io/cached_read.hpp"

#include <sys/uio.h>

#include <atomic>
#include <cerrno>

namespace sluice::server {

namespace {
std::atomic<bool> g_nowait_supported{true};
}  // namespace

bool read_if_cached(int fd, uint64_t offset, std::span<uint8_t> out) {
#if defined(RWF_NOWAIT)
  if (out.empty()) return true;
  if (!g_nowait_supported.load(std::memory_order_relaxed)) return false;
  iovec iov{out.data(), out.size()};
  ssize_t n = preadv2(fd, &iov, 1, static_cast<off_t>(offset), RWF_NOWAIT);
  if (n < 0) {
    if (errno == EOPNOTSUPP || errno == ENOSYS || errno == EINVAL) g_nowait_supported = false;
    return false;
  }
  // A short read is a partly cached range (or a file that shrank): the blocking path sorts it out.
  return static_cast<size_t>(n) == out.size();
#else
  (void)fd;
  (void)offset;
  (void)out;
  return false;
#endif
}

}  // namespace sluice::server
