// config/alerts.hpp: apps.NAME.alerts and hooks.on_stream_alert as loaded, their errors, and to_yaml
// printing them back.
#include <doctest/doctest.h>

#include <string>

#include "config/config.hpp"
#include "config/load.hpp"
#include "load_helpers.hpp"

using namespace sluice;
using namespace sluice::config;
using namespace std::chrono_literals;
using namespace sluice::config::test;

TEST_CASE("alerts: off unless set; every rule, read back") {
  auto c = load("apps:\n  live: { type: live }\n");
  REQUIRE(c.ok());
  CHECK_FALSE(c->find_app("live")->alerts.any());
  c = load(
      "hooks:\n  on_stream_alert: http://127.0.0.1:9/alert\n"
      "apps:\n  live:\n    type: live\n    alerts:\n      no_media: 5s\n      keyframe_interval: 4s\n"
      "      fps_below: 20\n      fps_for: 3s\n      bitrate_below_kbps: 500\n");
  REQUIRE(c.ok());
  CHECK(c->hooks.on_stream_alert == "http://127.0.0.1:9/alert");
  const StreamAlertRules& a = c->find_app("live")->alerts;
  CHECK(a.any());
  CHECK(*a.no_media == 5000ms);
  CHECK(*a.keyframe_interval == 4000ms);
  CHECK(*a.fps_below == 20);
  CHECK(a.fps_for == 3000ms);
  CHECK(*a.bitrate_below_kbps == 500);
  CHECK(a.bitrate_for == 10000ms);  // the default

  auto again = load(to_yaml(*c, Secrets::Show));
  REQUIRE(again.ok());
  CHECK(again->find_app("live")->alerts == a);
  CHECK(again->hooks.on_stream_alert == c->hooks.on_stream_alert);
}

TEST_CASE("alerts: precise errors") {
  const std::string head = "apps:\n  live:\n    type: live\n    alerts:\n";
  CHECK(contains(error_of(head + "      no_media: 200ms\n"), "apps.live.alerts.no_media: must be 1s..24h"));
  CHECK(contains(error_of(head + "      fps_below: 0\n"), "apps.live.alerts.fps_below"));
  CHECK(contains(error_of(head + "      keyframe: 4s\n"), "apps.live.alerts.keyframe"));
  CHECK(contains(error_of(head + "      bitrate_below_kbps: fast\n"), "apps.live.alerts.bitrate_below_kbps"));
}
