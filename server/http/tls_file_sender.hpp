// TlsFileSender: a file body over an HTTPS connection. sendfile(2) cannot encrypt, so the bytes
// pass through user space: a 256 KiB piece is read on libuv's threadpool (a page-cache miss never
// blocks the loop), handed to the connection, which encrypts and writes it with its other output,
// and the next piece is read only once the connection has written everything (on_drained()), so at
// most one piece per connection is in memory.
//
// Rules: as for HttpSendfile (server/http/sendfile.hpp), at most one transfer at a time, and after
// close() neither deliver nor done is called; close()'s callback runs once no read is in flight.
#pragma once

#include <uv.h>

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

namespace sluice::server {

class TlsFileSender {
 public:
  static constexpr size_t kPieceBytes = 256 * 1024;
  using Deliver = std::function<void(std::span<const uint8_t> bytes)>;
  using Done = std::function<void(int status)>;  // 0, or a negative libuv error code

  explicit TlsFileSender(uv_loop_t* loop) : loop_(loop) {}
  TlsFileSender(const TlsFileSender&) = delete;
  TlsFileSender& operator=(const TlsFileSender&) = delete;

  int start(uv_file file_fd, uint64_t offset, uint64_t length, Deliver deliver, Done done);
  // The connection has written everything it was given: read the next piece (or finish).
  void on_drained();
  bool active() const { return active_; }
  void close(std::function<void()> closed);

 private:
  static void on_read(uv_fs_t* req);
  void read_next();
  void finish(int status);

  uv_loop_t* loop_;
  uv_fs_t req_{};
  uv_file fd_ = -1;
  uint64_t offset_ = 0;
  uint64_t left_ = 0;
  std::vector<uint8_t> buffer_;
  Deliver deliver_;
  Done done_;
  std::function<void()> closed_;
  bool active_ = false;
  bool reading_ = false;
  bool waiting_for_drain_ = false;
  bool closed_called_ = false;
};

}  // namespace sluice::server
