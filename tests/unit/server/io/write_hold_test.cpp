// WriteHold: the hold follows the number of sockets a period held, aiming at the write budget,
// bounded by the ceiling; a budget of 0 is the fixed hold.
#include <doctest/doctest.h>

#include "config/config.hpp"
#include "server/io/write_hold.hpp"

using sluice::server::WriteHold;

TEST_CASE("a lightly loaded loop does not hold; a busy one holds up to the ceiling") {
  WriteHold hold(100, 10000);
  CHECK(hold.hold_ms() == 0);  // nothing known yet: write at once
  CHECK(hold.period_ended(4) == 0);
  CHECK(hold.period_ended(200) == 20);    // 200 players x 50 writes/s = 10000
  CHECK(hold.period_ended(1000) == 100);  // 1000 players x 10 writes/s
  CHECK(hold.period_ended(5000) == 100);  // never past the ceiling
  CHECK(hold.period_ended(15) == 2);      // rounded to the nearest ms
  CHECK(hold.period_ended(0) == 0);       // the load went away
}

TEST_CASE("above the knee the budget shrinks with its square: the hold grows with the cube") {
  WriteHold hold(100, 20000, 200);      // the defaults
  CHECK(hold.period_ended(100) == 5);   // below the knee: as without one
  CHECK(hold.period_ended(200) == 10);  // at it: the same
  CHECK(hold.period_ended(220) == 13);  // 220^3 / (20000 x 200^2) s = 13.3 ms
  CHECK(hold.period_ended(300) == 34);  // 33.75 ms
  CHECK(hold.period_ended(400) == 80);
  CHECK(hold.period_ended(430) == 99);
  CHECK(hold.period_ended(431) == 100);  // the ceiling from 431 on
  CHECK(hold.period_ended(20000) == 100);
  CHECK(hold.period_ended(50'000'000) == 100);  // no overflow at absurd counts
  WriteHold high(350, 20000, 200);
  CHECK(high.period_ended(600) == 270);  // under a higher ceiling it keeps growing
}

TEST_CASE("a budget of 0 always holds the ceiling; a ceiling of 0 never holds") {
  WriteHold fixed(30, 0);
  CHECK(fixed.hold_ms() == 30);
  CHECK(fixed.period_ended(1) == 30);
  CHECK(fixed.period_ended(100000) == 30);
  WriteHold off(0, 10000);
  CHECK(off.period_ended(100000) == 0);
}

TEST_CASE("the configuration's defaults give the hold docs/configuration.md promises") {
  const sluice::config::PlayerQueueConfig q;
  WriteHold hold(static_cast<uint64_t>(q.write_delay.count()), q.write_budget, q.write_budget_players);
  CHECK(hold.period_ended(9) == 0);
  CHECK(hold.period_ended(100) == 5);
  CHECK(hold.period_ended(200) == 10);
  CHECK(hold.period_ended(300) == 34);
  CHECK(hold.period_ended(400) == 80);
  CHECK(hold.period_ended(431) == 100);
}
