// WriteHold: how long live media waits before it is written, chosen from the load (docs/live.md,
// "Write hold"). Most of what a fan-out costs is the kernel's price per write, so a busy loop
// should write each player less often, while a lightly loaded one has no reason to wait.
//
// The rule keeps a loop near a budget of writes per second: a period in which S sockets had media
// held makes the next hold S / budget seconds, bounded by the ceiling. Above `knee` sockets the
// budget shrinks with the square of the excess (budget x (knee / S)^2: the hold grows with the
// cube of S), because on a busy loop the cost per byte, not the delay, is what must be saved, and
// a light loop should stay within a few ms. At the defaults (20000 writes/s, knee 200, ceiling
// 100 ms) 200 players are held 10 ms, 300 players 34 ms, 400 players 80 ms, 431 and more 100 ms;
// a handful go out at the end of the loop iteration. A budget of 0 holds every period for the
// ceiling (the fixed write_delay of before); a knee of 0 keeps the budget at every load.
// Sans I/O: the FlushScheduler reports periods and arms its timer with what this returns.
#pragma once

#include <cstddef>
#include <cstdint>

namespace sluice::server {

class WriteHold {
 public:
  WriteHold() = default;
  WriteHold(uint64_t ceiling_ms, uint64_t writes_per_second, uint64_t knee = 0);

  // A period ended in which `sockets` distinct sockets had held media; returns the next hold.
  uint64_t period_ended(size_t sockets);
  // The hold now, ms (0: written at the end of the loop iteration).
  uint64_t hold_ms() const { return hold_ms_; }
  uint64_t ceiling_ms() const { return ceiling_ms_; }

 private:
  uint64_t ceiling_ms_ = 0;
  uint64_t budget_ = 0;
  uint64_t knee_ = 0;
  uint64_t hold_ms_ = 0;
};

}  // namespace sluice::server
