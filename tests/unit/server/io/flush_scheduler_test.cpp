// FlushScheduler on a real libuv loop: held output of a few sockets goes out in the same loop
// iteration; once a period held many sockets, the next period holds them (WriteHold's rule), so
// each gets fewer, larger writes; a fixed hold (budget 0) waits its whole ceiling.
#include <doctest/doctest.h>
#include <uv.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "server/io/flush_scheduler.hpp"

using sluice::server::FlushScheduler;
using sluice::server::Flushable;
using sluice::server::WriteHold;

namespace {

struct Sink final : Flushable {
  uv_loop_t* loop = nullptr;
  std::vector<uint64_t> flushed_at;  // uv_now of every flush
  void flush() override { flushed_at.push_back(uv_now(loop)); }
  void close(const std::string&) override {}
};

struct Fixture {
  uv_loop_t loop{};
  FlushScheduler scheduler;
  std::vector<std::unique_ptr<Sink>> sinks;
  uv_timer_t stop{};

  Fixture(size_t n, WriteHold hold) {
    uv_loop_init(&loop);
    scheduler.start(&loop, hold);
    for (size_t i = 0; i < n; ++i) {
      sinks.push_back(std::make_unique<Sink>());
      sinks.back()->loop = &loop;
    }
  }
  ~Fixture() {
    scheduler.close_handles();
    uv_run(&loop, UV_RUN_DEFAULT);
    uv_loop_close(&loop);
  }
  // Holds media for every sink, then runs the loop until everything is flushed.
  uint64_t hold_all_and_run() {
    uv_update_time(&loop);
    const uint64_t t0 = uv_now(&loop);
    for (auto& s : sinks) scheduler.flush_held(s.get());
    while (true) {
      uv_run(&loop, UV_RUN_ONCE);
      bool all = true;
      for (auto& s : sinks) all &= !s->flushed_at.empty() && s->flushed_at.back() >= t0;
      if (all) break;
    }
    uint64_t last = 0;
    for (auto& s : sinks) last = std::max(last, s->flushed_at.back());
    return last - t0;
  }
};

}  // namespace

TEST_CASE("a few players are written in the same iteration, and the hold grows with the load") {
  Fixture few(3, WriteHold(100, 10000));
  CHECK(few.hold_all_and_run() < 5);
  CHECK(few.scheduler.hold_ms() == 0);

  Fixture many(500, WriteHold(100, 10000));
  CHECK(many.hold_all_and_run() < 5);      // the first period knows nothing yet
  CHECK(many.scheduler.hold_ms() == 50);   // 500 sockets at 10000 writes/s
  const uint64_t waited = many.hold_all_and_run();
  CHECK(waited >= 49);
  CHECK(waited < 90);
  for (auto& s : many.sinks) CHECK(s->flushed_at.size() == 2);  // one write per period each
}

TEST_CASE("a budget of 0 holds the whole ceiling every time") {
  Fixture fixed(2, WriteHold(30, 0));
  const uint64_t waited = fixed.hold_all_and_run();
  CHECK(waited >= 29);
  CHECK(waited < 60);
}
