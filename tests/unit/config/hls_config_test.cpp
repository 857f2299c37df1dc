// config/hls.hpp: apps.NAME.hls as loaded from YAML (docs/hls.md), its errors, and how to_yaml
// prints it back.
#include <doctest/doctest.h>

#include <string>

#include "config/config.hpp"
#include "config/load.hpp"
#include "load_helpers.hpp"

using namespace sluice;
using namespace sluice::config;
using namespace std::chrono_literals;
using namespace sluice::config::test;

TEST_CASE("hls: true is low-latency with the defaults, started on demand, memory only") {
  auto c = load("apps:\n  live: { type: live, hls: true }\n");
  REQUIRE(c.ok());
  const HlsConfig& h = c->apps[0].hls;
  CHECK(h.enabled);
  CHECK(h.variant == HlsVariant::LowLatency);
  CHECK(h.segment == 2000ms);
  CHECK(h.part == 200ms);
  CHECK(h.window == 6);
  CHECK(h.on_demand);
  CHECK(h.dir.empty());
  CHECK_FALSE(h.starts_at_publish());
}

TEST_CASE("hls: the map form, dir relative to the configuration file") {
  auto c = load(
      "apps:\n  tv:\n    type: live\n    hls: { variant: ts, segment: 4s, window: 10, idle_close: 30s, dir: hls/out/ "
      "}\n");
  REQUIRE(c.ok());
  const HlsConfig& h = c->apps[0].hls;
  CHECK(h.enabled);
  CHECK(h.variant == HlsVariant::MpegTs);
  CHECK(h.segment == 4000ms);
  CHECK(h.window == 10);
  CHECK(h.idle_close == 30000ms);
  CHECK(h.dir == "/srv/sluice/hls/out");
  CHECK(h.starts_at_publish());  // a CDN origin needs its files whether or not anyone asks
  // Printed back, it loads equal.
  std::string text = to_yaml(*c, Secrets::Show);
  CHECK(contains(text, "dir: /srv/sluice/hls/out"));
  auto again = load_string(text, "printed", "/elsewhere");
  REQUIRE(again.ok());
  CHECK(again->apps[0].hls == h);
}

TEST_CASE("hls: on_demand false starts at publish") {
  auto c = load("apps:\n  live: { type: live, hls: { on_demand: false } }\n");
  REQUIRE(c.ok());
  CHECK(c->apps[0].hls.starts_at_publish());
}

TEST_CASE("hls: errors name the key") {
  CHECK(contains(error_of("apps:\n  live: { type: live, hls: { variant: dash } }\n"),
                 "must be mpegts, fmp4 or low-latency"));
  CHECK(contains(error_of("apps:\n  live: { type: live, hls: { segment: 2s, part: 1500ms } }\n"),
                 "must be at most half the segment duration"));
  CHECK(contains(error_of("apps:\n  live: { type: live, hls: { window: 1 } }\n"), "window"));
  CHECK(contains(error_of("apps:\n  live: { type: live, hls: { dir: \"\" } }\n"), "must not be empty"));
  CHECK(contains(error_of("apps:\n  live: { type: live, hls: { folder: /tmp } }\n"), "folder"));
}
