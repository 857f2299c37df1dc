// server/api/stream_alerts.hpp: each alert raised once and cleared once, from the figures a stream
// shows round after round; held thresholds, the settling time of fps and bitrate, a stream that
// ends (no media; the content alerts stand still, then clear), a rule removed.
#include <doctest/doctest.h>

#include <map>
#include <string>
#include <vector>

#include "server/api/stream_alerts.hpp"

using namespace sluice;
using namespace sluice::server;
using namespace std::chrono_literals;

namespace {

struct Rig {
  config::StreamAlertRules rules;
  StreamAlerts alerts;
  std::map<std::string, StreamObservation> streams;
  std::vector<AlertEvent> events;
  bool has_rules = true;

  std::vector<AlertEvent> round(uint64_t now_ms) {
    events.clear();
    alerts.evaluate(
        streams, [&](std::string_view) { return has_rules ? &rules : nullptr; }, now_ms, events);
    return events;
  }
};

StreamObservation healthy(uint64_t live_for_ms) {
  StreamObservation o;
  o.live = true;
  o.live_for_ms = live_for_ms;
  o.idle_ms = 20;
  o.video = true;
  o.fps = 30;
  o.kbps = 2000;
  o.keyframe_interval_ms = 2000;
  o.since_keyframe_ms = 500;
  return o;
}

}  // namespace

TEST_CASE("stream alerts: a long GOP raises keyframe_interval once, a short one clears it once") {
  Rig rig;
  rig.rules.keyframe_interval = 4000ms;
  rig.streams["live/cam"] = healthy(1000);
  CHECK(rig.round(1000).empty());
  rig.streams["live/cam"].since_keyframe_ms = 4500;  // a 10 s GOP on its way
  auto e = rig.round(2000);
  REQUIRE(e.size() == 1);
  CHECK(e[0].stream == "live/cam");
  CHECK(e[0].kind == AlertKind::KeyframeInterval);
  CHECK(e[0].raised);
  CHECK(e[0].value == doctest::Approx(4.5));
  CHECK(e[0].threshold == doctest::Approx(4.0));
  rig.streams["live/cam"].since_keyframe_ms = 8000;
  CHECK(rig.round(3000).empty());  // once
  CHECK(rig.alerts.active().size() == 1);
  // The next keyframe came: the last interval is 10 s, still too long.
  rig.streams["live/cam"].since_keyframe_ms = 100;
  rig.streams["live/cam"].keyframe_interval_ms = 10000;
  CHECK(rig.round(4000).empty());
  rig.streams["live/cam"].keyframe_interval_ms = 2000;
  e = rig.round(5000);
  REQUIRE(e.size() == 1);
  CHECK_FALSE(e[0].raised);
  CHECK(e[0].value == doctest::Approx(2.0));
  CHECK(e[0].reason.empty());
  CHECK(rig.alerts.active().empty());
  CHECK(rig.alerts.raised_total()[static_cast<size_t>(AlertKind::KeyframeInterval)] == 1);

  // A new publisher on another loop: its figures start afresh. Its first keyframe alone clears
  // nothing; its first measured interval does.
  rig.streams["live/cam"].since_keyframe_ms = 6000;
  rig.streams["live/cam"].keyframe_interval_ms = 0;
  REQUIRE(rig.round(6000).size() == 1);
  rig.streams["live/cam"].since_keyframe_ms = 100;
  CHECK(rig.round(7000).empty());
  rig.streams["live/cam"].keyframe_interval_ms = 2000;
  e = rig.round(9000);
  REQUIRE(e.size() == 1);
  CHECK_FALSE(e[0].raised);
}

TEST_CASE("stream alerts: fps and bitrate wait for their figures to settle, then for `for`") {
  Rig rig;
  rig.rules.fps_below = 20;
  rig.rules.fps_for = 3000ms;
  rig.rules.bitrate_below_kbps = 500;
  rig.rules.bitrate_for = 0ms;
  StreamObservation o = healthy(1000);
  o.fps = 5;
  o.kbps = 100;
  rig.streams["live/slow"] = o;
  CHECK(rig.round(1000).empty());  // 1 s old: neither figure means anything yet
  rig.streams["live/slow"].live_for_ms = 6000;
  CHECK(rig.round(6000).empty());  // fps low since now, for 0 of 3 s
  CHECK(rig.round(8000).empty());
  auto e = rig.round(9000);
  REQUIRE(e.size() == 1);
  CHECK(e[0].kind == AlertKind::LowFps);
  rig.streams["live/slow"].live_for_ms = 10000;
  e = rig.round(10000);
  REQUIRE(e.size() == 1);
  CHECK(e[0].kind == AlertKind::LowBitrate);
  CHECK(e[0].value == doctest::Approx(100));
  // A dip shorter than `for` after a recovery raises nothing.
  rig.streams["live/slow"].fps = 30;
  e = rig.round(11000);
  REQUIRE(e.size() == 1);
  CHECK_FALSE(e[0].raised);
  rig.streams["live/slow"].fps = 5;
  CHECK(rig.round(12000).empty());
  rig.streams["live/slow"].fps = 30;
  CHECK(rig.round(13000).empty());
}

TEST_CASE("stream alerts: a stream that ends raises no_media, clears it when media comes back") {
  Rig rig;
  rig.rules.no_media = 3000ms;
  rig.rules.keyframe_interval = 4000ms;
  StreamObservation o = healthy(20000);
  o.since_keyframe_ms = 9000;
  rig.streams["live/cam"] = o;
  REQUIRE(rig.round(10000).size() == 1);  // keyframe_interval
  rig.streams.erase("live/cam");          // the publisher is gone
  CHECK(rig.round(12000).empty());
  auto e = rig.round(13100);
  REQUIRE(e.size() == 1);
  CHECK(e[0].kind == AlertKind::NoMedia);
  CHECK(e[0].raised);
  CHECK(e[0].value >= 3.0);
  // The content alerts stand still for a while, then clear: nobody publishes.
  CHECK(rig.round(19000).empty());
  e = rig.round(20100);
  REQUIRE(e.size() == 1);
  CHECK(e[0].kind == AlertKind::KeyframeInterval);
  CHECK(e[0].reason == "publisher left");
  // A new publisher: no_media clears.
  rig.streams["live/cam"] = healthy(100);
  e = rig.round(30000);
  REQUIRE(e.size() == 1);
  CHECK(e[0].kind == AlertKind::NoMedia);
  CHECK_FALSE(e[0].raised);
  CHECK(rig.alerts.tracked() == 1);
}

TEST_CASE("stream alerts: a stream that ends without a no_media rule is forgotten; a removed rule clears") {
  Rig rig;
  rig.rules.keyframe_interval = 4000ms;
  rig.streams["live/a"] = healthy(1000);
  CHECK(rig.round(1000).empty());
  CHECK(rig.alerts.tracked() == 1);
  rig.streams.clear();
  CHECK(rig.round(2000).empty());
  CHECK(rig.alerts.tracked() == 0);

  StreamObservation o = healthy(1000);
  o.since_keyframe_ms = 5000;
  rig.streams["live/b"] = o;
  REQUIRE(rig.round(3000).size() == 1);
  rig.has_rules = false;  // a reload took the app's alerts away
  auto e = rig.round(4000);
  REQUIRE(e.size() == 1);
  CHECK_FALSE(e[0].raised);
  CHECK(e[0].reason == "rule removed");
  CHECK(rig.alerts.tracked() == 0);
}

TEST_CASE("stream alerts: streams without rules are not followed; the number followed is bounded") {
  Rig rig;
  rig.has_rules = false;
  rig.streams["live/a"] = healthy(1000);
  rig.round(1000);
  CHECK(rig.alerts.tracked() == 0);
  rig.has_rules = true;
  rig.rules.no_media = 1000ms;
  for (size_t i = 0; i < StreamAlerts::kMaxTracked + 5; ++i) rig.streams["live/s" + std::to_string(i)] = healthy(100);
  rig.round(2000);
  CHECK(rig.alerts.tracked() == StreamAlerts::kMaxTracked + 6);  // live ones are all followed
  rig.streams.clear();
  auto e = rig.round(4000);  // all gone: no_media for each, then the bound
  CHECK(rig.alerts.tracked() == StreamAlerts::kMaxTracked);
  size_t raised = 0, cleared = 0;
  for (const AlertEvent& ev : e) (ev.raised ? raised : cleared)++;
  CHECK(raised == StreamAlerts::kMaxTracked + 6);
  CHECK(cleared == 6);
}
