// config/reload_diff.hpp: what a reload lists as changed, and what it refuses as needing a restart
// (docs/configuration.md, "Reload").
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "config/reload_diff.hpp"
#include "load_helpers.hpp"

using namespace sluice;
using namespace sluice::config;
using namespace sluice::config::test;

namespace {

const std::string kBase =
    "rtmp:\n  listen: [\"127.0.0.1:1935\"]\n"
    "apps:\n"
    "  live: { type: live, publish: { keys: [old-key] } }\n"
    "  vod: { type: vod, root: /srv/media }\n";

ReloadDiff diff(const std::string& before, const std::string& after) {
  auto a = load(before);
  auto b = load(after);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  return diff_for_reload(*a, *b);
}

bool has(const std::vector<std::string>& list, const std::string& entry) {
  return std::find(list.begin(), list.end(), entry) != list.end();
}

}  // namespace

TEST_CASE("the same file again changes nothing") {
  ReloadDiff d = diff(kBase, kBase);
  CHECK(d.unchanged());
  CHECK(d.applicable());
}

TEST_CASE("apps added, removed and changed are listed with the parts that changed, none needs a restart") {
  std::string next =
      "rtmp:\n  listen: [\"127.0.0.1:1935\"]\n"
      "apps:\n"
      "  live: { type: live, publish: { keys: [new-key] }, hls: { enabled: true, window: 9 } }\n"
      "  news: { type: live }\n";
  ReloadDiff d = diff(kBase, next);
  CHECK(d.applicable());
  CHECK(has(d.changes, "apps.live: changed (hls, publish)"));
  CHECK(has(d.changes, "apps.vod: removed"));
  CHECK(has(d.changes, "apps.news: added"));
  CHECK(d.changes.size() == 3);
}

TEST_CASE("log level, hooks, limits and RTMP listeners apply; the listeners are shown") {
  std::string next =
      "rtmp:\n  listen: [\"127.0.0.1:1935\", \"127.0.0.1:1936\"]\n"
      "log: { level: debug }\n"
      "hooks: { on_publish: \"http://127.0.0.1:9/p\" }\n"
      "limits: { per_ip: 5 }\n"
      "apps:\n"
      "  live: { type: live, publish: { keys: [old-key] } }\n"
      "  vod: { type: vod, root: /srv/media }\n";
  ReloadDiff d = diff(kBase, next);
  CHECK(d.applicable());
  CHECK(has(d.changes, "log.level: info -> debug"));
  CHECK(has(d.changes, "hooks: changed"));
  CHECK(has(d.changes, "limits: changed"));
  CHECK(has(d.changes, "rtmp.listen: [127.0.0.1:1935] -> [127.0.0.1:1935, 127.0.0.1:1936]"));
}

TEST_CASE("a changed worker count, cluster, SRT, WebRTC or the HTTP side on or off needs a restart, with the reason") {
  ReloadDiff workers = diff(kBase, kBase + "workers: 4\n");
  CHECK_FALSE(workers.applicable());
  REQUIRE(workers.needs_restart.size() == 1);
  CHECK(contains(workers.needs_restart[0], "workers: 0 -> 4 (the number of event loops is fixed at start)"));

  ReloadDiff http = diff(kBase, kBase + "http:\n  listen: [\"127.0.0.1:8081\"]\n");
  CHECK_FALSE(http.applicable());
  CHECK(contains(http.needs_restart.at(0), "http (on or off, proxy_protocol)"));
  const std::string with_http = kBase + "http:\n  listen: [\"127.0.0.1:8081\"]\n";
  ReloadDiff moved = diff(with_http, kBase + "http:\n  listen: [\"127.0.0.1:8082\"]\n");
  CHECK(moved.applicable());
  CHECK(has(moved.changes, "http.listen: [127.0.0.1:8081] -> [127.0.0.1:8082]"));

  ReloadDiff srt = diff(kBase, kBase + "srt:\n  listen: [\"127.0.0.1:9000\"]\n");
  CHECK_FALSE(srt.applicable());
  CHECK(contains(srt.needs_restart.at(0), "srt"));
}

TEST_CASE("the player queue's limits apply, its write scheduling needs a restart") {
  const std::string head = "rtmp:\n  listen: [\"127.0.0.1:1935\"]\n  player_queue: { ";
  const std::string apps =
      " }\napps:\n  live: { type: live, publish: { keys: [old-key] } }\n  vod: { type: vod, root: /srv/media }\n";
  ReloadDiff limits = diff(kBase, head + "hard_bytes: 32MiB" + apps);
  CHECK(limits.applicable());
  CHECK(has(limits.changes, "rtmp.player_queue limits: changed"));
  ReloadDiff hold = diff(kBase, head + "write_delay: 50ms" + apps);
  CHECK_FALSE(hold.applicable());
  CHECK(contains(hold.needs_restart.at(0), "rtmp.player_queue.write_*"));
}
