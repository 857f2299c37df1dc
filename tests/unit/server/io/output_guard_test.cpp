#include "server/io/output_guard.hpp"

#include <doctest/doctest.h>

#include "server/io/reassembly_budget.hpp"

using namespace sluice::server;
using Action = OutputGuard::Action;

TEST_CASE("output above the soft bound pauses reading until it drains below half of it") {
  OutputGuard g;
  g.configure(1000, 8000, 30'000);
  CHECK(g.update(1000, 0) == Action::None);
  CHECK(g.update(1001, 10) == Action::Pause);
  CHECK(g.paused());
  CHECK(g.update(900, 20) == Action::None);  // still above 500: stays paused
  CHECK(g.update(500, 30) == Action::Resume);
  CHECK_FALSE(g.paused());
  CHECK(g.update(0, 40) == Action::None);
}

TEST_CASE("output above the hard bound, or paused past the timeout, closes") {
  OutputGuard g;
  g.configure(1000, 8000, 30'000);
  CHECK(g.update(8001, 0) == Action::Close);
  OutputGuard t;
  t.configure(1000, 8000, 30'000);
  CHECK(t.update(2000, 1000) == Action::Pause);
  CHECK(t.update(2000, 31'000) == Action::None);
  CHECK(t.paused_for_ms(31'000) == 30'000);
  CHECK(t.update(2000, 31'001) == Action::Close);
}

TEST_CASE("the reassembly budget is shared by every lease and refuses only the one that grows past it") {
  const uint64_t base = ReassemblyLease::total();
  {
    ReassemblyLease a, b;
    CHECK(a.update(600, base + 1000));
    CHECK(ReassemblyLease::total() == base + 600);
    CHECK_FALSE(b.update(500, base + 1000));  // 1100 > 1000: b grew past it
    CHECK(a.update(100, base + 1000));        // shrinking is always fine
    CHECK(ReassemblyLease::total() == base + 600);
    CHECK(b.update(500, base + 1000));
  }
  CHECK(ReassemblyLease::total() == base);  // leases give their bytes back
}
