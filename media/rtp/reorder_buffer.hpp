// ReorderBuffer: the small jitter step in front of a depacketiser. Packets of one RTP stream come
// in any order (UDP reorders; NACKed ones come back late); they leave in sequence order, each at
// most once. Sans-I/O: the caller passes `now` (ms) and polls at deadline().
//
// Rules:
//  1. Packets leave as soon as every earlier sequence number has left or been given up. The
//     first packet sets where the stream starts: it leaves at once.
//  2. A missing sequence number is given up when the oldest packet held behind it has waited
//     Limits::max_wait_ms (time for a retransmission), or when a packet comes that is
//     Limits::capacity or more ahead of it (the buffer never holds more than `capacity`).
//  3. A packet at or behind what has left (a duplicate, or a retransmission too late) is dropped
//     and counted, as is a second copy of one held.
//  4. A jump of more than kRestartDistance either way is a new start of the stream (a sender that
//     restarted): what is held leaves in order and the count begins again there.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "base/bytes.hpp"

namespace sluice::media::rtp {

class ReorderBuffer {
 public:
  struct Limits {
    size_t capacity = 256;     // packets held at most: a second of a 3 Mb/s stream
    int64_t max_wait_ms = 80;  // enough for one NACK round trip on most paths
  };
  struct Packet {
    uint16_t sequence = 0;
    Slice bytes;
  };
  struct Stats {
    uint64_t received = 0;
    uint64_t released = 0;
    uint64_t duplicates = 0;  // a second copy of a held packet
    uint64_t late = 0;        // behind what had left (rule 3)
    uint64_t given_up = 0;    // sequence numbers skipped (rule 2)
    uint64_t restarts = 0;    // rule 4
  };
  static constexpr int kRestartDistance = 3000;

  ReorderBuffer() : ReorderBuffer(Limits{}) {}
  explicit ReorderBuffer(Limits limits);

  // A packet and its sequence number; what may leave now is appended to `out`, in order.
  void push(uint16_t sequence, Slice bytes, int64_t now_ms, std::vector<Packet>& out);
  // Gives up on gaps whose wait is over (rule 2); call at deadline().
  void poll(int64_t now_ms, std::vector<Packet>& out);
  // When poll() next has something to do; nothing when no packet waits behind a gap.
  std::optional<int64_t> deadline() const;
  // Everything held, in order, gaps skipped (the stream ended).
  void flush(std::vector<Packet>& out);

  size_t held() const { return held_; }
  const Stats& stats() const { return stats_; }

 private:
  struct Slot {
    bool used = false;
    uint16_t sequence = 0;
    int64_t arrived = 0;
    Slice bytes;
  };
  Slot& slot(uint16_t sequence) { return slots_[sequence % slots_.size()]; }
  void release_run(std::vector<Packet>& out);
  void skip_one(std::vector<Packet>& out);

  Limits limits_;
  std::vector<Slot> slots_;
  bool started_ = false;
  uint16_t next_ = 0;  // the next sequence number to leave
  size_t held_ = 0;
  Stats stats_;
};

}  // namespace sluice::media::rtp
