// Blocking file helpers of the jobs that run on the threadpool (server/record/finalize.cpp,
// server/record/mp4_copy.cpp, server/hls/hls_disk_writer.cpp): a descriptor closed on every
// return path, and a write that finishes or fails.
#pragma once

#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>

namespace sluice::server {

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

// All of data, retrying EINTR and short writes; false on an error (errno says which).
inline bool write_all(int fd, const uint8_t* data, size_t size) {
  while (size > 0) {
    ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

}  // namespace sluice::server
