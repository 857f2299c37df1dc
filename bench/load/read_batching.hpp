// ReadBatching: how long a player lets media build up in its socket before the kernel wakes it.
//
// Why: on loopback most of a reader's cost is per read, not per byte (each read also sends a
// window update, and the kernel then runs the server's ACK processing and its next transmit in
// the reader's context). Measured with 1000 players of a 2.6 Mb/s stream from nginx-rtmp, reading
// as soon as anything arrives cost the bench 1.3-1.9 CPU-s per GB received, reading ~20 KiB at a
// time 0.6, ~30 KiB 0.45; the server's CPU did not change. So each player sets SO_RCVLOWAT to
// about batch_ms worth of its own measured bitrate.
//
// It never holds media back for long: when nothing has been read for a few batch periods (the
// bitrate dropped, or the stream paused), the low-water mark goes back to 1 byte at once, which
// also wakes the reader for whatever is already queued. TTFF is not affected: batching starts
// after the first picture.
#pragma once

#include <cstdint>

namespace sluice::bench {

class ReadBatching {
 public:
  explicit ReadBatching(uint32_t batch_ms) : batch_ms_(batch_ms) {}

  // Called periodically with the connection's received byte count. Returns the SO_RCVLOWAT value
  // to apply now, or -1 to leave it as it is.
  int64_t update(int64_t now_ns, uint64_t bytes_in);

 private:
  uint32_t batch_ms_;
  bool started_ = false;
  int64_t current_ = 1;  // what the socket has now (1 = the kernel default)
  int64_t window_start_ns_ = 0;
  uint64_t window_bytes_ = 0;
  int64_t last_change_ns_ = 0;
  uint64_t last_bytes_ = 0;
};

}  // namespace sluice::bench
