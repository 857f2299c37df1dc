// config/: YAML loading, validation messages, units, addresses, to_yaml round trip.
#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "config/address.hpp"
#include "config/config.hpp"
#include "config/default_config.hpp"
#include "config/load.hpp"
#include "load_helpers.hpp"
#include "config/units.hpp"

using namespace sluice;
using namespace sluice::config;
using namespace std::chrono_literals;
using namespace sluice::config::test;

namespace {

constexpr std::string_view kMinimalApps = "apps:\n  live: { type: live }\n";

// The issue's minimum schema, verbatim.
constexpr std::string_view kMinimal = R"(rtmp:
  listen: 0.0.0.0:1935          # address:port, or a list of them
  chunk_size: 4096
apps:
  live: { type: live, gop_cache: true }
  vod:  { type: vod, root: ./media }
log:
  level: info
http:
  listen: 0.0.0.0:8080
  api: { allow: [127.0.0.1/32, ::1/128] }
  upload: { token: "s3cret", max_size: 4GiB }
)";

}  // namespace

TEST_CASE("embedded default loads and serves") {
  auto r = load_default();
  REQUIRE_MESSAGE(r.ok(), r.error().message());
  const Config& c = *r;
  CHECK(c.source == kEmbeddedSourceName);
  REQUIRE(c.rtmp.listen.size() == 1);
  CHECK(c.rtmp.listen[0] == ListenAddress{"0.0.0.0", 1935});
  CHECK(c.rtmp.chunk_size == 4096);
  CHECK(c.rtmp.io_uring);
  REQUIRE(c.apps.size() == 2);
  const AppConfig* live = c.find_app("live");
  REQUIRE(live);
  CHECK(live->type == AppType::Live);
  CHECK(live->gop_cache);
  const AppConfig* vod = c.find_app("vod");
  REQUIRE(vod);
  CHECK(vod->type == AppType::Vod);
  std::filesystem::path expected = (std::filesystem::current_path() / "vod").lexically_normal();
  CHECK(vod->root == expected.string());
  CHECK(c.find_app("nope") == nullptr);
  CHECK(c.http.enabled);
  REQUIRE(c.http.listen.size() == 1);
  CHECK(c.http.listen[0] == ListenAddress{"0.0.0.0", 8080});
  CHECK(c.http.api.allow == std::vector<Cidr>{Cidr::loopback_v4(), Cidr::loopback_v6()});
  CHECK(c.log.level == LogLevel::Info);
  CHECK(c.workers == 0);  // auto: one loop per core
}

TEST_CASE("minimal schema from the issue parses") {
  auto r = load(kMinimal);
  REQUIRE_MESSAGE(r.ok(), r.error().message());
  const Config& c = *r;
  CHECK(c.source == "sluice.yaml");
  CHECK(c.base_dir == "/srv/sluice");
  CHECK(c.rtmp.listen == std::vector<ListenAddress>{{"0.0.0.0", 1935}});
  REQUIRE(c.apps.size() == 2);
  CHECK(c.apps[0].name == "live");  // File order is kept.
  CHECK(c.apps[1].name == "vod");
  CHECK(c.apps[1].root == "/srv/sluice/media");
  CHECK(c.http.enabled);  // An http section turns HTTP on.
  CHECK(c.http.listen == std::vector<ListenAddress>{{"0.0.0.0", 8080}});
  REQUIRE(c.http.api.allow.size() == 2);
  CHECK(c.http.api.allow[1].to_string() == "::1/128");
  CHECK(c.http.upload_token == "s3cret");
  CHECK(c.http.upload_max_size == 4 * kGiB);
  // Absent keys keep their struct defaults.
  CHECK(c.rtmp.idle_timeout == 60s);
  CHECK(c.apps[0].gop_cache_max_frames == 2000);
  CHECK(c.apps[0].timestamp_jump == std::chrono::seconds(1));
  CHECK(c.apps[0].publish_conflict == PublishConflict::Takeover);
  CHECK(c.apps[0].publish_stale_after == std::chrono::seconds(3));
  CHECK(c.http.upload_extensions == HttpConfig{}.upload_extensions);
}

TEST_CASE("absent sections take defaults; http stays off without its section") {
  auto r = load(kMinimalApps);
  REQUIRE_MESSAGE(r.ok(), r.error().message());
  CHECK(r->rtmp == RtmpConfig{});
  CHECK_FALSE(r->http.enabled);
  CHECK(r->log == LogConfig{});

  auto off = load(std::string(kMinimalApps) + "http:\n  enabled: false\n  listen: 127.0.0.1:9000\n");
  REQUIRE(off.ok());
  CHECK_FALSE(off->http.enabled);
  CHECK(off->http.listen[0] == ListenAddress{"127.0.0.1", 9000});

  auto empty_section = load(std::string(kMinimalApps) + "log:\n");
  REQUIRE(empty_section.ok());
  CHECK(empty_section->log == LogConfig{});
}

TEST_CASE("listen: a single address or a list, in every accepted spelling") {
  auto one = load(std::string(kMinimalApps) + "rtmp:\n  listen: 127.0.0.1:0\n");
  REQUIRE_MESSAGE(one.ok(), one.error().message());
  CHECK(one->rtmp.listen == std::vector<ListenAddress>{{"127.0.0.1", 0}});

  auto list = load(
      std::string(kMinimalApps) +
      "rtmp:\n  listen:\n    - 0.0.0.0:1935\n    - \"[::]:1935\"\n    - :1936\n    - 1937\n    - \"[::1]:19350\"\n");
  REQUIRE_MESSAGE(list.ok(), list.error().message());
  CHECK(list->rtmp.listen ==
        std::vector<ListenAddress>{
            {"0.0.0.0", 1935}, {"::", 1935}, {"0.0.0.0", 1936}, {"0.0.0.0", 1937}, {"::1", 19350}});

  auto flow = load(std::string(kMinimalApps) + "rtmp:\n  listen: [10.0.0.1:1935, \"[::]:1935\"]\n");
  REQUIRE_MESSAGE(flow.ok(), flow.error().message());
  CHECK(flow->rtmp.listen.size() == 2);
}

TEST_CASE("parse_listen_address") {
  CHECK(parse_listen_address("0.0.0.0:1935")->to_string() == "0.0.0.0:1935");
  CHECK(parse_listen_address("[::]:1935")->to_string() == "[::]:1935");
  CHECK(parse_listen_address("[0:0::0]:80")->host == "::");
  CHECK(parse_listen_address(":1935")->host == "0.0.0.0");
  CHECK(parse_listen_address("127.0.0.1:0")->port == 0);
  for (const char* bad : {"", "localhost:1935", "0.0.0.0", "0.0.0.0:", "0.0.0.0:65536", "0.0.0.0:-1", "::1:1935",
                          "[::1]", "[::1]1935", "[1.2.3.4]:1", "1.2.3:1935", "0.0.0.0:19x"}) {
    CAPTURE(bad);
    CHECK_FALSE(parse_listen_address(bad).ok());
  }
}

TEST_CASE("parse_cidr and matching") {
  auto v4 = parse_cidr("10.0.0.0/8");
  REQUIRE(v4.ok());
  const uint8_t inside[4] = {10, 1, 2, 3};
  const uint8_t outside[4] = {11, 0, 0, 1};
  const uint8_t mapped[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 10, 9, 9, 9};
  CHECK(v4->contains(inside));
  CHECK_FALSE(v4->contains(outside));
  CHECK(v4->contains(mapped));  // An IPv4 client on a dual-stack listener.
  CHECK(parse_cidr("192.168.1.7")->to_string() == "192.168.1.7/32");
  CHECK(parse_cidr("::1")->to_string() == "::1/128");
  CHECK(parse_cidr("0.0.0.0/0")->contains(outside));
  CHECK(parse_cidr("fd00::/8").ok());
  auto host_bits = parse_cidr("10.1.2.3/8");
  REQUIRE_FALSE(host_bits.ok());
  CHECK(contains(host_bits.error().context, "did you mean 10.0.0.0/8?"));
  CHECK_FALSE(parse_cidr("10.0.0.0/33").ok());
  CHECK_FALSE(parse_cidr("10.0.0.0/").ok());
  CHECK_FALSE(parse_cidr("example.com/8").ok());
  CHECK(cidr_list_allows({}, outside));
  std::vector<Cidr> only_v4 = {*v4};
  CHECK_FALSE(cidr_list_allows(only_v4, outside));
}

TEST_CASE("sizes") {
  CHECK(*parse_size("4GiB") == 4 * kGiB);
  CHECK(*parse_size("512KiB") == 512 * kKiB);
  CHECK(*parse_size("512 kib") == 512 * kKiB);
  CHECK(*parse_size("16MiB") == 16 * kMiB);
  CHECK(*parse_size("2TiB") == 2 * (kGiB << 10));
  CHECK(*parse_size("1048576") == 1048576);
  CHECK(*parse_size("10B") == 10);
  CHECK(*parse_size("5MB") == 5'000'000);
  CHECK(*parse_size("0") == 0);
  for (const char* bad : {"", "GiB", "-1", "1.5GiB", "4 GiBs", "4XB", "99999999999999999999", "16777216TiB", "0x10"}) {
    CAPTURE(bad);
    CHECK_FALSE(parse_size(bad).ok());
  }
  CHECK(format_size(4 * kGiB) == "4GiB");
  CHECK(format_size(1536) == "1536");
  CHECK(format_size(3 * kMiB / 2) == "1536KiB");
  CHECK(format_size(0) == "0");
}

TEST_CASE("durations") {
  CHECK(*parse_duration("30s") == 30s);
  CHECK(*parse_duration("500ms") == 500ms);
  CHECK(*parse_duration("5m") == 5min);
  CHECK(*parse_duration("1h") == 1h);
  CHECK(*parse_duration("1m30s") == 90s);
  CHECK(*parse_duration("1h2m3s4ms") == 1h + 2min + 3s + 4ms);
  CHECK(*parse_duration("0") == 0ms);
  CHECK(*parse_duration("0s") == 0ms);
  CHECK(*parse_duration("7d") == std::chrono::hours(24 * 7));
  CHECK(*parse_duration("1d12h") == 36h);
  for (const char* bad :
       {"", "30", "s", "-5s", "1.5s", "30 s", "5w", "30s5m", "1s1s", "1h1d", "3651d", "99999999999999999999s"}) {
    CAPTURE(bad);
    CHECK_FALSE(parse_duration(bad).ok());
  }
  CHECK(contains(parse_duration("30").error().context, "needs a unit"));
  CHECK(format_duration(90s) == "1m30s");
  CHECK(format_duration(500ms) == "500ms");
  CHECK(format_duration(0ms) == "0s");
  CHECK(format_duration(1h + 1ms) == "1h1ms");
}

TEST_CASE("sizes and durations in the file") {
  auto r = load(std::string(kMinimalApps) +
                "rtmp:\n  max_message_size: 8MiB\n  handshake_timeout: 5s\n  idle_timeout: 2m\n  ping_interval: 0\n"
                "  player_queue: { soft_bytes: 1MiB, hard_bytes: 8MiB, soft_delay: 2s, hard_delay: 10s }\n");
  REQUIRE_MESSAGE(r.ok(), r.error().message());
  CHECK(r->rtmp.max_message_size == 8 * kMiB);
  CHECK(r->rtmp.handshake_timeout == 5s);
  CHECK(r->rtmp.idle_timeout == 2min);
  CHECK(r->rtmp.ping_interval == 0ms);
  CHECK(r->rtmp.player_queue == PlayerQueueConfig{1 * kMiB, 8 * kMiB, 2s, 10s});

  CHECK(error_of(std::string(kMinimalApps) + "rtmp:\n  idle_timeout: 30\n") ==
        "sluice.yaml:4:17: rtmp.idle_timeout: duration \"30\" needs a unit: ms, s, m, h or d (e.g. 30s or 30ms)");
  CHECK(error_of(std::string(kMinimalApps) + "rtmp:\n  max_message_size: 4 parsecs\n") ==
        "sluice.yaml:4:21: rtmp.max_message_size: unknown size unit \"parsecs\" in \"4 parsecs\" (use B, KiB, MiB, "
        "GiB, TiB, KB, MB, GB or TB)");
  CHECK(error_of(std::string(kMinimalApps) + "rtmp:\n  max_message_size: 32MiB\n") ==
        "sluice.yaml:4:21: rtmp.max_message_size: must be 64KiB..16MiB (got 32MiB)");
  CHECK(error_of(std::string(kMinimalApps) + "rtmp:\n  handshake_timeout: 0\n") ==
        "sluice.yaml:4:22: rtmp.handshake_timeout: must be 100ms..10m (got 0)");
}

TEST_CASE("validation errors name file, line, column and key") {
  // The example from the issue, at the same position.
  CHECK(error_of("# Sluice\napps:\n  live: { type: live }\nrtmp: { chunk_size: 0 }\n") ==
        "sluice.yaml:4:21: rtmp.chunk_size: must be 128..65536 (got 0)");
  CHECK(error_of(std::string(kMinimalApps) + "rtmp:\n  chunk_size: 70000\n") ==
        "sluice.yaml:4:15: rtmp.chunk_size: must be 128..65536 (got 70000)");
  CHECK(error_of(std::string(kMinimalApps) + "rtmp:\n  chunk_size: -5\n") ==
        "sluice.yaml:4:15: rtmp.chunk_size: must be 128..65536 (got -5)");
  CHECK(error_of(std::string(kMinimalApps) + "rtmp:\n  listen: localhost:1935\n") ==
        "sluice.yaml:4:11: rtmp.listen: not a numeric IP address: \"localhost\" (use 0.0.0.0 for all IPv4 interfaces, "
        "[::] for IPv6, or a literal address)");
  CHECK(error_of(std::string(kMinimalApps) + "rtmp:\n  listen: [0.0.0.0:1935, 0.0.0.0:99999]\n") ==
        "sluice.yaml:4:26: rtmp.listen[1]: bad port \"99999\" in \"0.0.0.0:99999\" (expected 0..65535)");
  CHECK(error_of(std::string(kMinimalApps) + "rtmp:\n  listen: []\n") ==
        "sluice.yaml:4:11: rtmp.listen: needs at least one address");
  CHECK(error_of(std::string(kMinimalApps) + "log:\n  level: verbose\n") ==
        "sluice.yaml:4:10: log.level: must be error, warn, info or debug (got \"verbose\")");
  CHECK(error_of(std::string(kMinimalApps) + "log:\n  format: xml\n") ==
        "sluice.yaml:4:11: log.format: must be text or json (got \"xml\")");
  CHECK(error_of("apps:\n  live: { type: live, publish_allow: [10.1.2.3/8] }\n") ==
        "sluice.yaml:2:39: apps.live.publish_allow[0]: \"10.1.2.3/8\" has host bits set (did you mean 10.0.0.0/8?)");
  CHECK(error_of("apps:\n  live: { type: live, publish_token: \"a b\" }\n") ==
        "sluice.yaml:2:38: apps.live.publish_token: may only use letters, digits, '-', '.', '_' and '~' (it travels "
        "in the stream name as ?token=)");
  CHECK(error_of("apps:\n  vod: { type: vod }\n") ==
        "sluice.yaml:2:3: apps.vod.root: missing: vod apps need the directory of their files");
  CHECK(error_of("apps:\n  v: { root: /x }\n") == "sluice.yaml:2:3: apps.v.type: missing (live, edge or vod)");
  CHECK(error_of("apps:\n  v: { type: stream }\n") ==
        "sluice.yaml:2:14: apps.v.type: must be live, edge or vod (got \"stream\")");
  CHECK(error_of("apps:\n  vod: { type: vod, root: ./v, gop_cache: true }\n") ==
        "sluice.yaml:2:32: apps.vod.gop_cache: only valid for live apps (this app is vod)");
  CHECK(error_of("apps:\n  live: { type: live, root: ./v }\n") ==
        "sluice.yaml:2:23: apps.live.root: only valid for vod apps (this app is live)");
  CHECK(error_of("apps:\n  live: { type: live, record: true }\n") ==
        "sluice.yaml:2:31: apps.live.record: record: true needs record_path (the directory for the recordings)");
  CHECK(error_of("apps:\n  \"a/b\": { type: live }\n") ==
        "sluice.yaml:2:3: apps.a/b: app names may only use letters, digits, '.', '_' and '-'");
  CHECK(error_of("apps: {}\n") == "sluice.yaml:1:7: apps: at least one app is required");
  CHECK(error_of("rtmp: { chunk_size: 4096 }\n") ==
        "sluice.yaml: apps: missing: at least one app is required (e.g. live: { type: live })");
  CHECK(error_of(std::string(kMinimalApps) + "workers: 0\n") == "sluice.yaml:3:10: workers: must be 1..1024 (got 0)");
  CHECK(error_of(std::string(kMinimalApps) + "http:\n  upload: { extensions: [mp4, \"m p3\"] }\n") ==
        "sluice.yaml:4:25: http.upload.extensions: extensions are letters and digits, like mp4 (got \"m p3\")");
}

TEST_CASE("vod apps: symlinks, playlist and name bounds") {
  auto d = load("apps:\n  vod: { type: vod, root: ./v }\n");
  REQUIRE_MESSAGE(d.ok(), d.error().message());
  CHECK(d->apps[0].follow_symlinks);
  CHECK(d->apps[0].playlist_max_entries == 64);
  CHECK(d->apps[0].name_max_bytes == 1024);
  auto r = load(
      "apps:\n  vod: { type: vod, root: ./v, follow_symlinks: false, playlist_max_entries: 1, "
      "name_max_bytes: 4000 }\n");
  REQUIRE_MESSAGE(r.ok(), r.error().message());
  CHECK_FALSE(r->apps[0].follow_symlinks);
  CHECK(r->apps[0].playlist_max_entries == 1);
  CHECK(r->apps[0].name_max_bytes == 4000);
  CHECK(error_of("apps:\n  vod: { type: vod, root: ./v, playlist_max_entries: 0 }\n") ==
        "sluice.yaml:2:54: apps.vod.playlist_max_entries: must be 1..10000 (got 0)");
  CHECK(error_of("apps:\n  vod: { type: vod, root: ./v, name_max_bytes: 5000 }\n") ==
        "sluice.yaml:2:48: apps.vod.name_max_bytes: must be 16..4000 (got 5000)");
  CHECK(error_of("apps:\n  live: { type: live, follow_symlinks: true }\n") ==
        "sluice.yaml:2:23: apps.live.follow_symlinks: only valid for vod apps (this app is live)");
}

TEST_CASE("cross-field checks") {
  CHECK(error_of(std::string(kMinimalApps) + "rtmp:\n  idle_timeout: 30s\n  ping_interval: 30s\n") ==
        "sluice.yaml:5:18: rtmp.ping_interval: ping_interval (30s) must be shorter than idle_timeout (30s), or a quiet "
        "but healthy player is closed before it is pinged");
  CHECK(load(std::string(kMinimalApps) + "rtmp:\n  idle_timeout: 0\n  ping_interval: 30s\n").ok());
  auto lanes = load(std::string(kMinimalApps) + "rtmp:\n  player_queue: { write_lanes: 1 }\n");
  REQUIRE_MESSAGE(lanes.ok(), lanes.error().message());
  CHECK(lanes->rtmp.player_queue.write_lanes == 1);
  CHECK(load(std::string(kMinimalApps))->rtmp.player_queue.write_lanes == 8);
  CHECK(error_of(std::string(kMinimalApps) + "rtmp:\n  player_queue: { write_lanes: 0 }\n")
            .find("rtmp.player_queue.write_lanes") != std::string::npos);
  CHECK(error_of(std::string(kMinimalApps) + "rtmp:\n  player_queue: { soft_bytes: 32MiB }\n") ==
        "sluice.yaml:4:31: rtmp.player_queue.soft_bytes: soft_bytes (32MiB) must not exceed hard_bytes (16MiB)");
  CHECK(error_of(std::string(kMinimalApps) + "rtmp:\n  listen: 0.0.0.0:8080\nhttp:\n  listen: 127.0.0.1:8080\n") ==
        "sluice.yaml:6:11: http.listen: 127.0.0.1:8080 (http.listen) overlaps 0.0.0.0:8080 (rtmp.listen): both cannot "
        "listen on port 8080");
  CHECK(error_of(std::string(kMinimalApps) + "rtmp:\n  listen: [0.0.0.0:1935, 0.0.0.0:1935]\n") ==
        "sluice.yaml:4:26: rtmp.listen[1]: duplicate address 0.0.0.0:1935");
  // Different families, or a disabled HTTP side, do not conflict; port 0 never does.
  CHECK(load(std::string(kMinimalApps) + "rtmp:\n  listen: [0.0.0.0:1935, \"[::]:1935\"]\n").ok());
  CHECK(load(std::string(kMinimalApps) + "rtmp:\n  listen: 0.0.0.0:8080\nhttp:\n  enabled: false\n").ok());
  CHECK(load(std::string(kMinimalApps) + "rtmp:\n  listen: 127.0.0.1:0\nhttp:\n  listen: 127.0.0.1:0\n").ok());
}

TEST_CASE("unknown keys are errors, with a suggestion when close") {
  CHECK(error_of("apps:\n  live: { type: live, gop_cahce: true }\n") ==
        "sluice.yaml:2:23: apps.live.gop_cahce: unknown key (did you mean gop_cache?)");
  CHECK(error_of(std::string(kMinimalApps) + "rtmp:\n  chunksize: 4096\n") ==
        "sluice.yaml:4:3: rtmp.chunksize: unknown key (did you mean chunk_size?)");
  CHECK(error_of(std::string(kMinimalApps) + "rtmp:\n  colour: blue\n") == "sluice.yaml:4:3: rtmp.colour: unknown key");
  CHECK(error_of(std::string(kMinimalApps) + "vhosts: {}\n") == "sluice.yaml:3:1: vhosts: unknown key");
  CHECK(error_of(std::string(kMinimalApps) + "http:\n  api: { alow: [] }\n") ==
        "sluice.yaml:4:10: http.api.alow: unknown key (did you mean allow?)");
  CHECK(error_of(std::string(kMinimalApps) + "rtmp:\n  chunk_size: 4096\n  chunk_size: 8192\n") ==
        "sluice.yaml:5:3: rtmp.chunk_size: duplicate key (first set at line 4)");
}

TEST_CASE("wrong types are errors") {
  CHECK(error_of(std::string(kMinimalApps) + "rtmp:\n  chunk_size: big\n") ==
        "sluice.yaml:4:15: rtmp.chunk_size: must be an integer (got \"big\")");
  CHECK(error_of(std::string(kMinimalApps) + "rtmp:\n  chunk_size: [1, 2]\n") ==
        "sluice.yaml:4:15: rtmp.chunk_size: must be an integer, not a list");
  CHECK(error_of(std::string(kMinimalApps) + "rtmp:\n  chunk_size:\n") ==
        "sluice.yaml:4:3: rtmp.chunk_size: has no value (expected an integer)");
  CHECK(error_of("apps:\n  live: { type: live, gop_cache: 5 }\n") ==
        "sluice.yaml:2:34: apps.live.gop_cache: must be true or false (got \"5\")");
  CHECK(error_of(std::string(kMinimalApps) + "rtmp: 1935\n") ==
        "sluice.yaml:3:7: rtmp: must be a map of settings, not a single value");
  CHECK(error_of("apps: [live, vod]\n") ==
        "sluice.yaml:1:7: apps: must be a map of app name to settings (e.g. live: { type: live }), not a list");
  CHECK(error_of("apps:\n  live: live\n") ==
        "sluice.yaml:2:9: apps.live: must be a map of settings, not a single value");
  CHECK(error_of(std::string(kMinimalApps) + "rtmp:\n  listen: { host: x }\n") ==
        "sluice.yaml:4:11: rtmp.listen: must be an address:port or a list of them, not a map");
  CHECK(error_of("- a\n- b\n") ==
        "sluice.yaml:1:1: the file must be a map of sections (rtmp, apps, http, log), not a list");
  // Quoted numbers and YAML 1.1 booleans are accepted.
  auto r = load("apps:\n  live: { type: live, gop_cache: off, gop_cache_max_frames: \"100\" }\n");
  REQUIRE_MESSAGE(r.ok(), r.error().message());
  CHECK_FALSE(r->apps[0].gop_cache);
  CHECK(r->apps[0].gop_cache_max_frames == 100);
  auto no_ring = load(std::string(kMinimalApps) + "rtmp:\n  io_uring: false\n");
  REQUIRE_MESSAGE(no_ring.ok(), no_ring.error().message());
  CHECK_FALSE(no_ring->rtmp.io_uring);
  CHECK(error_of("apps:\n  live: { type: live, timestamp_jump: 50ms }\n").find("apps.live.timestamp_jump") !=
        std::string::npos);
  CHECK(error_of("apps:\n  v: { type: vod, root: /tmp, timestamp_jump: 2s }\n").find("only valid for live apps") !=
        std::string::npos);
  auto strict = load("apps:\n  live: { type: live, publish_conflict: Reject, publish_stale_after: 1500ms }\n");
  REQUIRE_MESSAGE(strict.ok(), strict.error().message());
  CHECK(strict->apps[0].publish_conflict == PublishConflict::Reject);
  CHECK(strict->apps[0].publish_stale_after == std::chrono::milliseconds(1500));
  CHECK(error_of("apps:\n  live: { type: live, publish_conflict: newest }\n") ==
        "sluice.yaml:2:41: apps.live.publish_conflict: must be takeover or reject (got \"newest\")");
  CHECK(error_of("apps:\n  live: { type: live, publish_stale_after: 100ms }\n").find("apps.live.publish_stale_after") !=
        std::string::npos);
  CHECK(error_of("apps:\n  v: { type: vod, root: /tmp, publish_conflict: reject }\n").find("only valid for live") !=
        std::string::npos);
  CHECK(error_of(std::string(kMinimalApps) + "rtmp:\n  io_uring: sometimes\n") ==
        "sluice.yaml:4:13: rtmp.io_uring: must be true or false (got \"sometimes\")");
}

TEST_CASE("several errors are reported at once") {
  std::string e =
      error_of("apps:\n  live: { type: live }\nrtmp:\n  chunk_size: 1\n  idle_timeout: soon\nlog: { level: x }\n");
  CHECK(contains(e, "sluice.yaml:4:15: rtmp.chunk_size:"));
  CHECK(contains(e, "\nsluice.yaml:5:17: rtmp.idle_timeout:"));
  CHECK(contains(e, "\nsluice.yaml:6:15: log.level:"));
}

TEST_CASE("YAML syntax errors carry the line") {
  std::string e = error_of("apps:\n  live: { type: live\nrtmp: {}\n");
  CHECK(e.rfind("sluice.yaml:", 0) == 0);
  CHECK(contains(e, "YAML syntax error"));
  std::string v6 = error_of(std::string(kMinimalApps) + "rtmp:\n  listen: [::]:1935\n");
  CHECK(v6.rfind("sluice.yaml:4:", 0) == 0);
  CHECK(contains(v6, "must be quoted"));
  std::string indent = error_of("apps:\n  live:\n    type: live\n     gop_cache: true\n");
  CHECK(indent.rfind("sluice.yaml:4:", 0) == 0);
}

TEST_CASE("relative paths resolve against base_dir") {
  auto r = load(
      "apps:\n  vod: { type: vod, root: ../media/./files/ }\n  abs: { type: vod, root: /var/media }\n"
      "  live: { type: live, record: true, record_path: rec }\n",
      "/etc/sluice");
  REQUIRE_MESSAGE(r.ok(), r.error().message());
  CHECK(r->find_app("vod")->root == "/etc/media/files");
  CHECK(r->find_app("abs")->root == "/var/media");
  CHECK(r->find_app("live")->record.dir == "/etc/sluice/rec");
}

TEST_CASE("load_file: base is the file's directory; errors name the path") {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("sluice_config_test_" + std::to_string(::getpid()));
  fs::create_directories(dir / "conf");
  fs::path file = dir / "conf" / "sluice.yaml";
  {
    std::ofstream out(file);
    out << "apps:\n  vod: { type: vod, root: media }\n";
  }
  auto r = load_file(file.string());
  REQUIRE_MESSAGE(r.ok(), r.error().message());
  CHECK(r->source == file.string());
  CHECK(r->find_app("vod")->root == (dir / "conf" / "media").string());
  {
    std::ofstream out(file);
    out << "apps:\n  vod: { type: vod, root: media, gop_cahce: 1 }\n";
  }
  auto bad = load_file(file.string());
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().context.rfind(file.string() + ":2:", 0) == 0);

  auto missing = load_file((dir / "nope.yaml").string());
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().code == Errc::Config);
  CHECK(contains(missing.error().context, "nope.yaml: cannot read config file"));
  CHECK_FALSE(load_file(dir.string()).ok());
  fs::remove_all(dir);
}

TEST_CASE("to_yaml output reloads to an equal config") {
  SUBCASE("default") {
    auto a = load_default();
    REQUIRE(a.ok());
    std::string text = to_yaml(*a, Secrets::Show);
    auto b = load_string(text, "printed", "/elsewhere");
    REQUIRE_MESSAGE(b.ok(), (b.error().message() + "\n" + text));
    b->source = a->source;
    b->base_dir = a->base_dir;
    CHECK(*a == *b);
  }
  SUBCASE("everything set") {
    auto a = load(R"(workers: auto
rtmp:
  listen: [127.0.0.1:1935, "[::1]:1935", 0.0.0.0:0]
  chunk_size: 60000
  window_ack_size: 5000000
  max_message_size: 1000000
  max_connections: 0
  handshake_timeout: 1500ms
  idle_timeout: 0
  ping_interval: 1h30m
  player_queue: { soft_bytes: 100000, hard_bytes: 1GiB, soft_delay: 1s, hard_delay: 1m1ms }
  io_uring: no
apps:
  tv:
    type: live
    gop_cache: false
    gop_cache_max_frames: 7
    gop_cache_max_bytes: 1MiB
    wait_for_publisher: false
    timestamp_jump: 5s
    publish_conflict: reject
    publish_stale_after: 2s
    publish_allow: [10.0.0.0/8, "fd00::/8"]
    publish_token: abc-123
    record: true
    record_path: rec
  films: { type: vod, root: "/media/my films", follow_symlinks: false, playlist_max_entries: 3, name_max_bytes: 200 }
http:
  listen: "[::]:8443"
  api: { allow: [] }
  upload: { token: "abc+/==", max_size: 1, extensions: [.MP4, flv, flv] }
log: { level: debug, format: json }
)");
    REQUIRE_MESSAGE(a.ok(), a.error().message());
    CHECK(a->workers == 0);
    CHECK(a->apps[0].timestamp_jump == 5s);
    CHECK(a->http.api.allow.empty());
    CHECK(a->http.upload_extensions == std::vector<std::string>{"mp4", "flv"});
    std::string text = to_yaml(*a, Secrets::Show);
    auto b = load_string(text, "printed", "/elsewhere");
    REQUIRE_MESSAGE(b.ok(), (b.error().message() + "\n" + text));
    b->source = a->source;
    b->base_dir = a->base_dir;
    CHECK(*a == *b);

    // Redacted by default: tokens do not end up in logs.
    std::string logged = to_yaml(*a);
    CHECK_FALSE(contains(logged, "abc-123"));
    CHECK_FALSE(contains(logged, "abc+/=="));
    CHECK(contains(logged, "<redacted>"));
  }
}

TEST_CASE("loading never throws, whatever the input") {
  const std::vector<std::string> inputs = {"",
                                           "~",
                                           "[",
                                           "{a: b",
                                           "!!binary x",
                                           "*alias",
                                           "&a [*a]",
                                           "? [a, b]\n: c",
                                           "apps:\n  ? [x]\n  : { type: live }\n",
                                           "apps:\n  live: { type: live, publish_allow: [[1]] }\n",
                                           "\t",
                                           "apps: !!map {}",
                                           std::string(5000, '['),
                                           std::string(5000, '-') + " x"};
  for (const std::string& in : inputs) {
    CAPTURE(in);
    Result<Config> r = Error(Errc::Config);
    CHECK_NOTHROW(r = load(in));
    CHECK_FALSE(r.ok());
    if (!r.ok()) CHECK(r.error().code == Errc::Config);
  }
}

TEST_CASE("access: keys from the file, a key file and the environment; signed secrets; hooks; limits") {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("sluice-access-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  {
    std::ofstream(dir / "keys") << "# comment\nk-file-1\n\n  k-file-2  \n";
    std::ofstream(dir / "sign.key") << "0123456789abcdef0123\n";
    std::ofstream(dir / "stream-keys") << "cam1 k-cam-1\ncam2\tk-cam-2\n";
  }
  ::setenv("SLUICE_CONFIG_TEST_KEYS", "k-env-1, k-env-2", 1);
  ::setenv("SLUICE_CONFIG_TEST_TOKEN", "api-token\n", 1);
  auto c = load(R"(apps:
  live:
    type: live
    publish:
      keys: [k-inline]
      keys_file: keys
      keys_env: SLUICE_CONFIG_TEST_KEYS
      stream_keys_file: stream-keys
      allow: [10.0.0.0/8, "::1/128"]
      deny: [10.9.0.0/16]
      signed: { secret_file: sign.key, skew: 1m }
    play:
      stream_keys: { solo: k-solo }
    limits: { publishers: 3, players: 100, players_per_stream: 10 }
hooks:
  on_publish: http://127.0.0.1:9000/hooks/publish
  on_play_done: https://hooks.example/done
  timeout: 500ms
  fail: open
limits: { connections: 500, per_ip: 20 }
server_id: node-7
http:
  api: { token_env: SLUICE_CONFIG_TEST_TOKEN }
)",
                dir.string());
  REQUIRE_MESSAGE(c.ok(), c.error().message());
  const AppConfig& live = c->apps[0];
  CHECK(live.publish.keys == std::vector<std::string>{"k-inline", "k-file-1", "k-file-2", "k-env-1", "k-env-2"});
  REQUIRE(live.publish.stream_keys.size() == 2);
  CHECK(live.publish.stream_keys[1] == std::pair<std::string, std::string>{"cam2", "k-cam-2"});
  CHECK(live.publish.signed_url.secret.value == "0123456789abcdef0123");
  CHECK(live.publish.signed_url.secret.origin == "file " + (dir / "sign.key").string());
  CHECK(live.publish.signed_url.skew == 1min);
  CHECK(live.publish.deny.size() == 1);
  CHECK(live.play.stream_keys.size() == 1);
  CHECK(live.play.needs_credentials());
  CHECK(live.limits.players_per_stream == 10);
  CHECK(c->hooks.on_publish == "http://127.0.0.1:9000/hooks/publish");
  CHECK(c->hooks.timeout == 500ms);
  CHECK(c->hooks.fail_open);
  CHECK(c->rtmp.max_connections == 500);
  CHECK(c->limits.per_ip == 20);
  CHECK(c->server_id == "node-7");
  CHECK(c->http.api.token.value == "api-token");
  // Printed for logs, no secret shows; printed with Show, it reloads equal.
  std::string redacted = to_yaml(*c);
  CHECK_FALSE(contains(redacted, "k-inline"));
  CHECK_FALSE(contains(redacted, "0123456789abcdef0123"));
  CHECK(contains(redacted, "file " + (dir / "keys").string()));
  auto again = load_string(to_yaml(*c, Secrets::Show), "printed", "/elsewhere");
  REQUIRE_MESSAGE(again.ok(), again.error().message());
  again->source = c->source;
  again->base_dir = c->base_dir;
  CHECK(*again == *c);

  const std::string apps = "apps:\n  live:\n    type: live\n    publish:\n";
  CHECK(contains(error_of(apps + "      keys_file: /nonexistent/keys\n"), "apps.live.publish.keys_file: cannot read"));
  CHECK(contains(error_of(apps + "      keys_env: SLUICE_NOT_SET_ANYWHERE\n"), "is not set"));
  CHECK(contains(error_of(apps + "      keys: [\"a b\"]\n"), "visible ASCII characters without spaces"));
  CHECK(contains(error_of(apps + "      signed: { secret: short }\n"), "at least 16 bytes"));
  CHECK(contains(error_of(apps + "      signed: { skew: 1s }\n"), "needs secret, secret_file or secret_env"));
  CHECK(contains(error_of(apps + "      signed: { secret: 0123456789abcdef, secret_env: X }\n"), "give only one of"));
  CHECK(contains(error_of(apps + "      allow: [10.0.0.0/8]\n    publish_allow: [10.0.0.0/8]\n"), "older spelling"));
  CHECK(contains(error_of("apps: { live: { type: live } }\nhooks: { on_play: ftp://x }\n"), "http:// or https://"));
  CHECK(contains(error_of("apps: { live: { type: live } }\nhooks: { fail: maybe }\n"), "must be closed"));
  CHECK(contains(error_of("apps: { live: { type: live } }\nrtmp: { max_connections: 5 }\nlimits: { connections: 6 }\n"),
                 "not both"));
  CHECK(contains(error_of("apps: { v: { type: vod, root: /x, publish: { keys: [a] } } }\n"), "only valid for live"));
  fs::remove_all(dir);
}

TEST_CASE("record: the short form and the map with segments") {
  auto c = load("apps:\n  live: { type: live, record: { dir: rec, segment: { duration: 10m, size: 1GiB } } }\n");
  REQUIRE_MESSAGE(c.ok(), c.error().message());
  const AppConfig& a = c->apps[0];
  CHECK(a.record.mode == RecordMode::All);
  CHECK(a.record.dir == "/srv/sluice/rec");
  CHECK(a.record.segment_duration == 10min);
  CHECK(a.record.segment_bytes == kGiB);
  CHECK(a.record.path == "{app}/{stream}-%Y%m%d-%H%M%S");
  CHECK_FALSE(a.record.mp4);
  auto again = load_string(to_yaml(*c, Secrets::Show), "printed", "/elsewhere");
  REQUIRE_MESSAGE(again.ok(), again.error().message());
  CHECK(again->apps[0] == a);
  auto off = load("apps:\n  live: { type: live, record: { mode: off } }\n");
  REQUIRE(off.ok());
  CHECK_FALSE(off->apps[0].record.enabled());
  auto short_form = load("apps:\n  live: { type: live, record: true, record_path: rec }\n");
  REQUIRE_MESSAGE(short_form.ok(), short_form.error().message());
  CHECK(short_form->apps[0].record.mode == RecordMode::All);
  CHECK(short_form->apps[0].record.dir == "/srv/sluice/rec");
  CHECK(
      contains(error_of("apps:\n  live: { type: live, record: { segment: { duration: 1m } } }\n"), "record needs dir"));
  CHECK(contains(error_of("apps:\n  live: { type: live, record: { mode: some, dir: x } }\n"),
                 "must be off, all or manual"));
  CHECK(contains(error_of("apps:\n  live: { type: live, record: { dir: x, segment: { size: 10KiB } } }\n"),
                 "at least 1MiB"));
  CHECK(contains(error_of("apps:\n  live: { type: live, record: { dir: x }, record_path: y }\n"), "record.dir"));
}

TEST_CASE("record: manual mode, a path template, keep and mp4") {
  auto c = load(
      "apps:\n  live: { type: live, record: { mode: manual, dir: rec, path: \"{app}/%Y-%m-%d/{stream}-{seq}\",\n"
      "    keep: { age: 7d, size: 500GiB }, mp4: true } }\n");
  REQUIRE_MESSAGE(c.ok(), c.error().message());
  const RecordConfig& r = c->apps[0].record;
  CHECK(r.mode == RecordMode::Manual);
  CHECK(r.path == "{app}/%Y-%m-%d/{stream}-{seq}");
  CHECK(r.keep_age == std::chrono::hours(24 * 7));
  CHECK(r.keep_bytes == 500 * kGiB);
  CHECK(r.mp4);
  auto again = load_string(to_yaml(*c, Secrets::Show), "printed", "/elsewhere");
  REQUIRE_MESSAGE(again.ok(), again.error().message());
  CHECK(again->apps[0] == c->apps[0]);
  auto short_keep = load("apps:\n  live: { type: live, record: { dir: rec, keep: 36h } }\n");
  REQUIRE_MESSAGE(short_keep.ok(), short_keep.error().message());
  CHECK(short_keep->apps[0].record.keep_age == std::chrono::hours(36));
  auto path_error = [](const std::string& tmpl) {
    return error_of("apps:\n  live: { type: live, record: { dir: rec, path: \"" + tmpl + "\" } }\n");
  };
  CHECK(contains(path_error("../{stream}"), "\"..\" component"));
  CHECK(contains(path_error("/abs/{stream}"), "relative"));
  CHECK(contains(path_error("{app}//{stream}"), "empty"));
  CHECK(contains(path_error("{app}/%D-{stream}"), "unknown time conversion %D"));
  CHECK(contains(path_error("{app}/{name}"), "unknown variable {name}"));
  CHECK(contains(path_error("{app}/%Y"), "must contain {stream}"));
  CHECK(contains(path_error("{stream"), "unclosed"));
  CHECK(contains(error_of("apps:\n  live: { type: live, record: { dir: rec, keep: { size: 1MiB } } }\n"),
                 "at least 16MiB"));
}

TEST_CASE("rtmps: listen with one certificate or several, and what is missing") {
  auto c = load(
      "rtmps: { listen: 127.0.0.1:1936, cert: tls/cert.pem, key: tls/key.pem }\n"
      "apps:\n  live: { type: live }\n");
  REQUIRE_MESSAGE(c.ok(), c.error().message());
  REQUIRE(c->rtmps.enabled());
  CHECK(c->rtmps.listen.size() == 1);
  REQUIRE(c->rtmps.certificates.size() == 1);
  CHECK(c->rtmps.certificates[0].cert == "/srv/sluice/tls/cert.pem");
  auto again = load_string(to_yaml(*c, Secrets::Show), "printed", "/elsewhere");
  REQUIRE_MESSAGE(again.ok(), again.error().message());
  CHECK(again->rtmps == c->rtmps);
  auto many = load(
      "rtmps:\n  listen: 127.0.0.1:1936\n  certificates:\n    - { cert: a.pem, key: a.key }\n"
      "    - { cert: b.pem, key: b.key }\napps:\n  live: { type: live }\n");
  REQUIRE_MESSAGE(many.ok(), many.error().message());
  CHECK(many->rtmps.certificates.size() == 2);
  CHECK_FALSE(load("apps:\n  live: { type: live }\n")->rtmps.enabled());
  CHECK(contains(error_of("rtmps: { listen: 127.0.0.1:1936 }\napps:\n  live: { type: live }\n"), "needs cert and key"));
  CHECK(contains(error_of("rtmps: { listen: 127.0.0.1:1936, cert: a.pem }\napps:\n  live: { type: live }\n"),
                 "both cert and key"));
  // record_layer: Sluice's by default, OpenSSL's on request, printed and read back.
  CHECK(c->rtmps.seal_records);
  auto openssl = load(
      "rtmps: { listen: 127.0.0.1:1936, cert: a.pem, key: a.key, record_layer: openssl }\n"
      "apps:\n  live: { type: live }\n");
  REQUIRE_MESSAGE(openssl.ok(), openssl.error().message());
  CHECK_FALSE(openssl->rtmps.seal_records);
  auto printed = load_string(to_yaml(*openssl, Secrets::Show), "printed", "/elsewhere");
  REQUIRE(printed.ok());
  CHECK_FALSE(printed->rtmps.seal_records);
  CHECK(contains(error_of("rtmps: { listen: 127.0.0.1:1936, cert: a.pem, key: a.key, record_layer: gnutls }\n"
                          "apps:\n  live: { type: live }\n"),
                 "must be sluice or openssl"));
}

TEST_CASE("rtmp.limits.reassembly_budget: auto by default, a size when given, printed back") {
  auto c = sluice::config::test::load("apps:\n  live: { type: live }\n");
  REQUIRE(c.ok());
  CHECK(c->rtmp.limits.reassembly_budget == 0);  // auto
  CHECK(sluice::config::to_yaml(*c, sluice::config::Secrets::Show).find("reassembly_budget: auto") !=
        std::string::npos);
  c = sluice::config::test::load("rtmp:\n  limits:\n    reassembly_budget: 64MiB\napps:\n  live: { type: live }\n");
  REQUIRE(c.ok());
  CHECK(c->rtmp.limits.reassembly_budget == 64u << 20);
  c = sluice::config::test::load("rtmp:\n  limits:\n    reassembly_budget: auto\napps:\n  live: { type: live }\n");
  REQUIRE(c.ok());
  CHECK(c->rtmp.limits.reassembly_budget == 0);
}
