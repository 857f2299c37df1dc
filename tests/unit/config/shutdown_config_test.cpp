// config/config.hpp ShutdownConfig: shutdown.drain as loaded, its bounds, and to_yaml printing it
// back (docs/configuration.md, "shutdown").
#include <doctest/doctest.h>

#include <string>

#include "config/config.hpp"
#include "config/load.hpp"
#include "load_helpers.hpp"

using namespace sluice;
using namespace sluice::config;
using namespace std::chrono_literals;
using namespace sluice::config::test;

namespace {
const char* kApps = "apps:\n  live: { type: live }\n";
}  // namespace

TEST_CASE("shutdown.drain: off unless set; a duration, 0 or 100ms..24h") {
  auto plain = load(kApps);
  REQUIRE(plain.ok());
  CHECK(plain->shutdown.drain == 0ms);

  auto set = load(std::string(kApps) + "shutdown:\n  drain: 1m30s\n");
  REQUIRE(set.ok());
  CHECK(set->shutdown.drain == 90s);

  auto zero = load(std::string(kApps) + "shutdown: { drain: 0s }\n");
  REQUIRE(zero.ok());
  CHECK(zero->shutdown.drain == 0ms);

  CHECK(contains(error_of(std::string(kApps) + "shutdown: { drain: 10ms }\n"), "must be 0 or 100ms..24h"));
  CHECK(contains(error_of(std::string(kApps) + "shutdown: { drain: 25h }\n"), "shutdown.drain"));
  CHECK(contains(error_of(std::string(kApps) + "shutdown: { drain: soon }\n"), "shutdown.drain"));
  CHECK(contains(error_of(std::string(kApps) + "shutdown: { grace: 10s }\n"), "grace"));
}

TEST_CASE("shutdown.drain survives to_yaml and loading again") {
  auto c = load(std::string(kApps) + "shutdown: { drain: 45s }\n");
  REQUIRE(c.ok());
  const std::string text = to_yaml(*c, Secrets::Show);
  CHECK(contains(text, "drain: 45s"));
  auto again = load(text);
  REQUIRE(again.ok());
  CHECK(again->shutdown.drain == 45s);
}
