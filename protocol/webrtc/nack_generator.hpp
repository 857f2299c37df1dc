// NackGenerator: the receiving side of NACK (docs/rtp.md, "NACK"). It watches the sequence
// numbers of one RTP stream arrive and says which missing ones to ask for again, and when.
// Sans-I/O: the caller passes `now` (ms), sends what poll() gives as a generic NACK
// (protocol/webrtc/rtcp.hpp write_nack) and polls again at deadline().
//
// Rules:
//  1. A number is missing when a later one has come and it has not. It is first asked for
//     Limits::reorder_delay_ms after its gap was seen (UDP reorders a little), then again every
//     retry interval (the round-trip time when known, else Limits::retry_ms), at most
//     Limits::max_tries times; then it is given up (counted) and the depacketiser deals with the loss.
//  2. At most Limits::max_missing numbers are tracked; the oldest go first when more are missing.
//     A jump of more than max_missing numbers forgets them all: that is a new start, not a
//     loss to repair.
//  3. A number that arrives (late, or retransmitted) stops being asked for.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

namespace sluice::protocol::webrtc {

class NackGenerator {
 public:
  struct Limits {
    size_t max_missing = 500;
    int max_tries = 10;
    int64_t reorder_delay_ms = 5;
    int64_t retry_ms = 100;  // until set_rtt() says better
  };
  struct Stats {
    uint64_t received = 0;
    uint64_t missing = 0;    // numbers found missing
    uint64_t recovered = 0;  // missing ones that came after all
    uint64_t given_up = 0;   // after max_tries, pushed out (rule 2) or forgotten at a jump
    uint64_t requests = 0;   // numbers asked for, repeats included
  };

  NackGenerator() : NackGenerator(Limits{}) {}
  explicit NackGenerator(Limits limits) : limits_(limits) {}

  void on_packet(uint16_t sequence, int64_t now_ms);
  // The numbers to ask for now; each counts as one try.
  void poll(int64_t now_ms, std::vector<uint16_t>& out);
  std::optional<int64_t> deadline() const;
  void set_rtt(int64_t rtt_ms) { rtt_ms_ = rtt_ms > 0 ? rtt_ms : 0; }

  size_t missing_now() const { return missing_.size(); }
  const Stats& stats() const { return stats_; }

 private:
  struct Missing {
    int64_t due = 0;  // when to ask next
    int tries = 0;
  };
  int64_t retry_interval() const { return rtt_ms_ > 0 ? rtt_ms_ : limits_.retry_ms; }

  Limits limits_;
  Stats stats_;
  int64_t rtt_ms_ = 0;
  bool started_ = false;
  int64_t highest_ = 0;                 // extended (64-bit) highest number received
  std::map<int64_t, Missing> missing_;  // by extended number
};

}  // namespace sluice::protocol::webrtc
