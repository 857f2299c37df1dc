// LoopFixture: one worker loop as the server runs it (a LoopContext with its flush scheduler, on a
// libuv loop of the test's own), for the unit tests of what lives on real sockets over 127.0.0.1,
// with run_until() to drive it.
#pragma once

#include <doctest/doctest.h>
#include <uv.h>

#include <cstdint>
#include <memory>

#include "config/config.hpp"
#include "server/io/loop_context.hpp"

namespace sluice::test {

struct LoopFixture {
  uv_loop_t uv{};
  config::Config config;
  std::unique_ptr<server::LoopContext> loop;
  uv_timer_t wake{};  // wakes uv_run(UV_RUN_ONCE) often, so run_until() sees its deadline

  LoopFixture() {
    uv_loop_init(&uv);
    config.rtmp.io_uring = false;
    loop = std::make_unique<server::LoopContext>(&uv, config, 0);
    loop->start();
    uv_timer_init(&uv, &wake);
    uv_timer_start(
        &wake, [](uv_timer_t*) {}, 5, 5);
  }
  ~LoopFixture() {
    uv_close(reinterpret_cast<uv_handle_t*>(&wake), nullptr);
    loop->close_handles();
    uv_run(&uv, UV_RUN_DEFAULT);
    CHECK(uv_loop_close(&uv) == 0);
  }
  LoopFixture(const LoopFixture&) = delete;
  LoopFixture& operator=(const LoopFixture&) = delete;

  // Runs the loop until done() holds, at most `ms` of the loop's clock; done()'s last answer.
  template <class Done>
  bool run_until(Done done, uint64_t ms = 5000) {
    uv_update_time(&uv);
    const uint64_t deadline = uv_now(&uv) + ms;
    while (!done()) {
      if (uv_now(&uv) >= deadline) return done();
      uv_run(&uv, UV_RUN_ONCE);
    }
    return true;
  }
  // Runs the loop for `ms` whatever happens (to see that something does not).
  void run_for(uint64_t ms) {
    run_until([] { return false; }, ms);
  }
};

}  // namespace sluice::test
