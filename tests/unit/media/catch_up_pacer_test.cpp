#include "media/catch_up_pacer.hpp"

#include <doctest/doctest.h>

using sluice::media::CatchUpPacer;

TEST_CASE("a join's backlog goes out at twice real time after its first half second") {
  CatchUpPacer p;
  CHECK(p.wait_ms(1000) == 0);  // nothing sent yet
  // A 2 s GOP handed over at once at t=1000: 500 ms of lead, the rest waits.
  for (uint32_t ts = 10000; ts <= 12000; ts += 40) p.sent(ts, 1000);
  CHECK(p.wait_ms(1000) == 750);  // (2000 - 500) / 2
  CHECK(p.wait_ms(1500) == 250);
  CHECK(p.wait_ms(1750) == 0);
  CHECK(p.wait_ms(5000) == 0);
}

TEST_CASE("media handed over no faster than allowed never waits") {
  CatchUpPacer p;
  p.sent(0, 0);
  for (uint64_t t = 0; t <= 3000; t += 40) {
    p.sent(static_cast<uint32_t>(t), t);
    CHECK(p.wait_ms(t) == 0);
  }
}

TEST_CASE("an empty queue before the first frame is no live edge") {
  CatchUpPacer p;
  p.caught_up(0);  // a first flush before the join's backlog was queued
  p.sent(0, 0);
  p.sent(2000, 0);
  CHECK(p.wait_ms(0) == 750);
}

TEST_CASE("at the live edge the pacer steps aside for good") {
  CatchUpPacer p;
  p.sent(0, 0);
  for (uint64_t t = 40; t <= 1200; t += 40) {
    p.sent(static_cast<uint32_t>(t), t);
    p.caught_up(t);  // every fill empties the queue: one frame at a time, at real time
    CHECK(p.wait_ms(t) == 0);
    CHECK(p.done() == (t >= CatchUpPacer::kSettleMs));
  }
  p.sent(60000, 1210);  // a takeover's timeline
  p.sent(56000, 1210);
  CHECK(p.wait_ms(1210) == 0);
}

// A reader on another loop than the publisher gets the join's GOP through the mesh, which may
// deliver the first frames before the owner has posted the rest: the queue is empty for a moment,
// and the pacing must go on when the rest arrives (srt_join_pace_test saw 960 ms of media in 7 ms).
TEST_CASE("an empty queue in the first second is no live edge: the rest of a replay is paced") {
  CatchUpPacer p;
  for (uint32_t ts = 0; ts <= 200; ts += 40) p.sent(ts, 5);
  p.caught_up(6);  // the first portion of the GOP, all handed over
  CHECK_FALSE(p.done());
  for (uint32_t ts = 240; ts <= 2500; ts += 40) p.sent(ts, 8);  // the rest
  CHECK(p.wait_ms(8) == 987);                                   // (2480 - 500 - 2 x 3) / 2, rounded up
}

TEST_CASE("modular timestamps: a backlog across the 32-bit wrap") {
  CatchUpPacer p;
  p.sent(0xFFFFFF00u, 0);
  p.sent(0xFFFFFF00u + 1500, 0);  // wrapped
  CHECK(p.wait_ms(0) == 500);
}

TEST_CASE("a frame behind the first is the start: the media is measured from the earliest") {
  CatchUpPacer p;
  p.sent(10400, 0);  // audio stamped 400 ms after the keyframe, handed over first
  p.sent(10000, 0);  // the keyframe
  p.sent(10600, 0);
  CHECK(p.wait_ms(0) == 50);  // 600 ms of media from 10000: (600 - 500) / 2
  p.sent(0xFFFFFF00u, 0);     // far behind: a jump, not a start
  CHECK(p.wait_ms(0) == 50);
}

TEST_CASE("a jump of the timeline during the catch-up is no backlog") {
  CatchUpPacer p;
  p.sent(1000, 0);
  p.sent(1400, 0);
  p.sent(900000, 0);
  CHECK(p.wait_ms(0) == 0);
}
