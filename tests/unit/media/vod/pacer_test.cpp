// VodPacer: the lead sent at once, the low-water mark and refill step, buffer length clamping,
// pause and resume, seek, the end of a duration or of the samples, the burst budget, backpressure.
#include <doctest/doctest.h>

#include <vector>

#include "media/vod/pacer.hpp"

using namespace sluice::media::vod;
using Kind = PaceDecision::Kind;

namespace {

constexpr uint64_t kT0 = 50000;  // the loop time at start: any value, the clock is relative

// Video only, a frame every 40 ms for `seconds`, adjacent in the file, `size` bytes each, a
// keyframe every 2 s.
MediaIndex movie(uint32_t seconds, uint32_t size = 100) {
  MediaIndex index;
  index.has_video = true;
  uint64_t offset = 13;
  for (uint32_t i = 0; i * 40 < seconds * 1000; ++i) {
    Sample s;
    s.type = kSampleVideo;
    s.dts_ms = i * 40;
    s.file_offset = offset;
    s.size = size;
    s.keyframe = s.dts_ms % 2000 == 0;
    offset += size;
    if (s.keyframe) index.keyframes.push_back({i, s.dts_ms});
    index.samples.push_back(s);
  }
  index.duration_ms = seconds * 1000;
  index.file_size = offset;
  return index;
}

struct Drained {
  std::vector<ReadPlan> plans;
  PaceDecision last;  // the first decision that is not a Read
  uint32_t first_sample() const { return plans.empty() ? UINT32_MAX : plans.front().first; }
  uint32_t end_sample() const { return plans.empty() ? 0 : plans.back().end; }
  uint64_t bytes() const {
    uint64_t n = 0;
    for (const auto& p : plans) n += p.bytes.size;
    return n;
  }
};

// Reads and sends everything the pacer asks for at `now`, as a player with a free socket does.
Drained drain(VodPacer& p, uint64_t now, bool read_on_loop = true) {
  Drained d;
  for (int guard = 0; guard < 10000; ++guard) {
    PaceDecision next = p.next(now, 0);
    if (next.kind != Kind::Read) {
      d.last = next;
      return d;
    }
    CHECK(next.plan.first == p.next_sample());
    CHECK(next.plan.end > next.plan.first);
    d.plans.push_back(next.plan);
    p.sent(next.plan, read_on_loop);
  }
  FAIL("the pacer never stopped asking for reads");
  return d;
}

uint32_t dts(const MediaIndex& index, uint32_t sample) { return index.samples[sample].dts_ms; }

}  // namespace

TEST_CASE("start sends the whole lead at once, then waits") {
  const MediaIndex index = movie(20);
  VodPacer p;
  CHECK(p.next(kT0, 0).kind == Kind::Idle);  // not started
  CHECK(p.start(index, -2000, -1, kT0) == 0);
  Drained d = drain(p, kT0);
  CHECK(d.first_sample() == 0);
  // Everything up to the default 3 s lead: frames 0..3000 ms, one plan (7.6 KB < the budget).
  CHECK(d.plans.size() == 1);
  CHECK(dts(index, d.end_sample() - 1) == 3000);
  CHECK(d.plans[0].bytes.offset == 13);
  CHECK(d.plans[0].bytes.size == 76 * 100);
  // The next frame (3040) is due at the low-water mark (clock 2040): more than the longest wait.
  CHECK(d.last.kind == Kind::Wait);
  CHECK(d.last.wake_at_ms == kT0 + VodPacer::kMaxWakeMs);
}

TEST_CASE("nothing is read until the next sample passes the low-water mark") {
  const MediaIndex index = movie(20);
  VodPacer p;
  p.start(index, 0, -1, kT0);
  drain(p, kT0);
  // Low water is the horizon minus 1 s: frame 3040 is due when the clock reaches 1040.
  PaceDecision at1000 = p.next(kT0 + 1000, 0);
  CHECK(at1000.kind == Kind::Wait);
  CHECK(at1000.wake_at_ms == kT0 + 1040);
  CHECK(p.next(kT0 + 1039, 0).wake_at_ms == kT0 + 1040);
  CHECK(p.next(kT0 + 1039, 0).kind == Kind::Wait);
  CHECK(p.next(kT0 + 1040, 0).kind == Kind::Read);
}

TEST_CASE("a refill is about a second of media: half the lead when the lead is short") {
  const MediaIndex index = movie(60);
  SUBCASE("the default 3 s lead refills 1 s at a time") {
    VodPacer p;
    p.start(index, 0, -1, kT0);
    drain(p, kT0);
    uint64_t now = kT0;
    for (int step = 0; step < 5; ++step) {
      PaceDecision w = p.next(now, 0);
      REQUIRE(w.kind == Kind::Wait);
      now = w.wake_at_ms;
      Drained d = drain(p, now);
      if (d.plans.empty()) continue;  // the longest wait came first
      // From the frame due at the low-water mark to the horizon, 1 s later.
      uint32_t from = dts(index, d.first_sample());
      uint32_t to = dts(index, d.end_sample() - 1);
      CHECK(to - from == 1000);
      CHECK(p.media_clock(now) + 3000 == to);
    }
  }
  SUBCASE("a 1 s lead refills 500 ms at a time") {
    VodPacer p;
    p.set_buffer_length(1000);
    p.start(index, 0, -1, kT0);
    Drained first = drain(p, kT0);
    CHECK(dts(index, first.end_sample() - 1) == 1000);
    PaceDecision w = first.last;
    REQUIRE(w.kind == Kind::Wait);
    CHECK(w.wake_at_ms == kT0 + 540);  // frame 1040 reaches the low water (horizon - 500) at 540
    Drained d = drain(p, w.wake_at_ms);
    CHECK(dts(index, d.first_sample()) == 1040);
    CHECK(dts(index, d.end_sample() - 1) == 1520);  // the horizon is 1540: the last frame before
  }
}

TEST_CASE("when a second of media is more than one read, reads go on only while the next is due") {
  // 30 KB frames: two per 64 KiB plan. A plan stops at the budget, and the next one is read only
  // if its first frame is within the low-water mark: the start sends 2 s and one plan, not 3 s,
  // and a refill is one plan per wake-up.
  const MediaIndex index = movie(20, 30000);
  VodPacer p;
  p.start(index, 0, -1, kT0);
  Drained d = drain(p, kT0, false);
  CHECK(dts(index, d.end_sample() - 1) == 2040);
  CHECK(d.last.kind == Kind::Wait);
  CHECK(d.last.wake_at_ms == kT0 + 80);  // frame 2080 reaches the low water at clock 80
  Drained refill = drain(p, d.last.wake_at_ms, false);
  CHECK(refill.plans.size() == 1);
  CHECK(dts(index, refill.first_sample()) == 2080);
  CHECK(refill.end_sample() - refill.first_sample() == 2);
  CHECK(refill.last.wake_at_ms == kT0 + 160);
}

TEST_CASE("the buffer length is clamped to 1..5 s, 3 s when unknown") {
  VodPacer p;
  CHECK(p.lead_ms() == 3000);
  p.set_buffer_length(0);
  CHECK(p.lead_ms() == 3000);
  p.set_buffer_length(200);
  CHECK(p.lead_ms() == 1000);
  p.set_buffer_length(2500);
  CHECK(p.lead_ms() == 2500);
  p.set_buffer_length(36000000);  // rtmpdump's 10 hours
  CHECK(p.lead_ms() == 5000);

  // And it is what the start sends: 5 s of a 60 s file, not all of it.
  const MediaIndex index = movie(60);
  p.start(index, 0, -1, kT0);
  Drained d = drain(p, kT0);
  CHECK(dts(index, d.end_sample() - 1) == 5000);
  CHECK(d.last.kind == Kind::Wait);
}

TEST_CASE("pause freezes the media clock and resume shifts it") {
  const MediaIndex index = movie(60);
  VodPacer p;
  p.start(index, 0, -1, kT0);
  drain(p, kT0);
  drain(p, kT0 + 1500);  // sent up to the horizon, 4500 ms: frame 4480
  CHECK(p.media_clock(kT0 + 1500) == 1500);
  p.pause(kT0 + 1500);
  CHECK(p.paused());
  CHECK(p.next(kT0 + 1500, 0).kind == Kind::Idle);
  CHECK(p.next(kT0 + 20000, 0).kind == Kind::Idle);
  CHECK(p.media_clock(kT0 + 20000) == 1500);

  // Ten seconds later: the clock goes on from 1500; frame 4520 is due when it reaches 2520.
  p.resume(kT0 + 11500);
  CHECK_FALSE(p.paused());
  CHECK(p.media_clock(kT0 + 11500) == 1500);
  PaceDecision w = p.next(kT0 + 11500, 0);
  CHECK(w.kind == Kind::Wait);
  CHECK(w.wake_at_ms == kT0 + 11500 + VodPacer::kMaxWakeMs);
  CHECK(p.next(kT0 + 11500 + 1019, 0).kind == Kind::Wait);
  Drained d = drain(p, kT0 + 11500 + 1020);
  CHECK(dts(index, d.first_sample()) == 4520);
  CHECK(dts(index, d.end_sample() - 1) == 5520);
}

TEST_CASE("a pause before the start holds until resume") {
  const MediaIndex index = movie(20);
  VodPacer p;
  p.pause(kT0);
  p.start(index, 0, -1, kT0);
  CHECK(p.next(kT0, 0).kind == Kind::Idle);
  p.resume(kT0 + 100);
  CHECK(p.next(kT0 + 100, 0).kind == Kind::Read);
}

TEST_CASE("seek restarts at the keyframe at or before the time, with the lead at once") {
  const MediaIndex index = movie(60);
  VodPacer p;
  p.start(index, 0, -1, kT0);
  drain(p, kT0);
  drain(p, kT0 + 1040);

  uint64_t now = kT0 + 5000;
  uint32_t sample = p.seek(31999, now);
  CHECK(sample == index.seek(31999));
  CHECK(dts(index, sample) == 30000);
  CHECK(p.media_clock(now) == 30000);
  Drained d = drain(p, now);
  CHECK(d.first_sample() == sample);
  CHECK(dts(index, d.end_sample() - 1) == 33000);

  // Seeking unpauses (the caller pauses again if it must); a negative time is the start.
  p.pause(now);
  CHECK(p.seek(-5, now + 10) == 0);
  CHECK_FALSE(p.paused());
  CHECK(p.media_clock(now + 10) == 0);
  CHECK(drain(p, now + 10).first_sample() == 0);
}

TEST_CASE("the play ends at the requested duration or at the last sample") {
  const MediaIndex index = movie(20);
  SUBCASE("start 4.1 s, duration 1 s: the keyframe at 4 s up to 5.1 s") {
    VodPacer p;
    uint32_t first = p.start(index, 4100, 1000, kT0);
    CHECK(dts(index, first) == 4000);
    Drained d = drain(p, kT0);
    CHECK(d.first_sample() == first);
    CHECK(dts(index, d.end_sample() - 1) == 5080);  // < 5100
    CHECK(d.last.kind == Kind::Finished);
  }
  SUBCASE("to the end of the samples") {
    VodPacer p;
    p.start(index, 0, -1, kT0);
    uint64_t now = kT0;
    PaceDecision last;
    for (int i = 0; i < 100; ++i) {
      last = drain(p, now).last;
      if (last.kind != Kind::Wait) break;
      now = last.wake_at_ms;
    }
    CHECK(last.kind == Kind::Finished);
    CHECK(p.next_sample() == index.samples.size());
    // In real time: the last frame (19960 ms) goes out within a refill step of 3 s before its time.
    CHECK(now - kT0 > 15960);
    CHECK(now - kT0 <= 16960 + VodPacer::kRefillStepMs);
  }
  SUBCASE("an empty file ends at once") {
    VodPacer p;
    MediaIndex empty;
    CHECK(p.start(empty, 0, -1, kT0) == 0);
    CHECK(p.next(kT0, 0).kind == Kind::Finished);
  }
  SUBCASE("stop forgets the play") {
    VodPacer p;
    p.start(index, 0, -1, kT0);
    p.pause(kT0);
    p.stop();
    CHECK_FALSE(p.paused());
    CHECK(p.next(kT0, 0).kind == Kind::Idle);
  }
}

TEST_CASE("after the burst budget read on the loop the player yields until its next wake-up") {
  // 30 KB frames: two per 64 KiB plan, 750 KB per second of media.
  const MediaIndex index = movie(20, 30000);
  VodPacer p;
  p.start(index, 0, -1, kT0);
  Drained d = drain(p, kT0);
  CHECK(d.last.kind == Kind::Yield);
  CHECK(d.last.wake_at_ms == kT0 + 1);
  for (const auto& plan : d.plans) CHECK(plan.end - plan.first == 2);
  CHECK(d.bytes() >= VodPacer::kMaxBurstBytes);
  CHECK(d.bytes() - d.plans.back().bytes.size < VodPacer::kMaxBurstBytes);
  // Asking again before the wake-up changes nothing.
  CHECK(p.next(kT0 + 1, 0).kind == Kind::Yield);
  p.end_burst();
  Drained more = drain(p, kT0 + 1);
  CHECK(more.first_sample() == d.end_sample());
  CHECK(more.last.kind == Kind::Yield);

  // Reads off the loop (the thread pool) do not count: no yield, up to the low-water mark.
  VodPacer q;
  q.start(index, 0, -1, kT0);
  Drained all = drain(q, kT0, false);
  CHECK(all.last.kind == Kind::Wait);
  CHECK(dts(index, all.end_sample() - 1) == 2040);
}

TEST_CASE("nothing is read while the connection has more than the pending limit to write") {
  const MediaIndex index = movie(20);
  VodPacer p;
  p.start(index, 0, -1, kT0);
  CHECK(p.next(kT0, VodPacer::kMaxPendingBytes + 1).kind == Kind::Blocked);
  CHECK(p.next(kT0, VodPacer::kMaxPendingBytes).kind == Kind::Read);
  // The end is reported whatever is pending.
  VodPacer q;
  q.start(index, 0, 0, kT0);
  CHECK(q.next(kT0, VodPacer::kMaxPendingBytes + 1).kind == Kind::Finished);
}
