// Reading a byte range of a file on the event loop when, and only when, that cannot block.
//
// preadv2(RWF_NOWAIT) copies from the page cache and fails with EAGAIN instead of waiting for the
// disk. VOD players of a popular (hence cached) file then skip the threadpool round trip (a
// futex wake-up, a context switch and a uv_async per read); a cold read still goes to the pool.
#pragma once

#include <cstdint>
#include <span>

namespace sluice::server {

// True when all of `out` was read from the file at `offset` without blocking. False means "read
// it the blocking way, off the loop": the data is not cached, the read came up short, or the
// kernel or file system does not support RWF_NOWAIT (then it is not tried again).
bool read_if_cached(int fd, uint64_t offset, std::span<uint8_t> out);

}  // namespace sluice::server
