// config/relay.hpp: apps.NAME.push, apps.NAME.pull and type: edge with origins, as loaded from
// YAML, the errors they give, and how to_yaml prints them back (keys hidden unless asked for).
#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "config/config.hpp"
#include "config/load.hpp"
#include "load_helpers.hpp"

using namespace sluice;
using namespace sluice::config;
using namespace std::chrono_literals;
using namespace sluice::config::test;

namespace {

// Printed with the keys shown, the config reads back equal.
void check_round_trip(const Config& c) {
  std::string text = to_yaml(c, Secrets::Show);
  auto again = load_string(text, "printed", "/elsewhere");
  REQUIRE_MESSAGE(again.ok(), (again.error().message() + "\n" + text));
  again->source = c.source;
  again->base_dir = c.base_dir;
  CHECK(*again == c);
}

}  // namespace

TEST_CASE("push: targets with an inline key, a key file, a key from the environment, and streams") {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("sluice-relay-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "twitch.key") << "live_123_file\n";  // the newline is trimmed
  ::setenv("SLUICE_RELAY_TEST_KEY", "yt-env-key", 1);
  auto c = load(R"(apps:
  live:
    type: live
    push:
      - url: rtmp://backup.example:1936/live
      - url: rtmps://a.rtmp.youtube.com/live2
        key_env: SLUICE_RELAY_TEST_KEY
        streams: [main]
        verify: false
      - url: rtmp://live.twitch.tv/app
        key_file: twitch.key
      - { url: "rtmp://h/app/{stream}_copy", key: inline-key, streams: [a, b] }
)",
                dir.string());
  REQUIRE_MESSAGE(c.ok(), c.error().message());
  const RelayConfig& relay = c->apps[0].relay;
  REQUIRE(relay.push.size() == 4);
  CHECK(relay.push[0].url == "rtmp://backup.example:1936/live");
  CHECK(relay.push[0].key.value.empty());
  CHECK(relay.push[0].streams.empty());  // every stream
  CHECK(relay.push[0].verify);
  CHECK(relay.push[1].key.value == "yt-env-key");
  CHECK(relay.push[1].key.origin == "env SLUICE_RELAY_TEST_KEY");
  CHECK(relay.push[1].streams == std::vector<std::string>{"main"});
  CHECK_FALSE(relay.push[1].verify);
  CHECK(relay.push[2].key.value == "live_123_file");
  CHECK(relay.push[2].key.origin == "file " + (dir / "twitch.key").string());
  CHECK(relay.push[3].url == "rtmp://h/app/{stream}_copy");
  CHECK(relay.push[3].key.value == "inline-key");
  CHECK(relay.push[3].streams == std::vector<std::string>{"a", "b"});
  // Pushing alone pulls nothing and is no edge.
  CHECK_FALSE(relay.pull.enabled());
  CHECK_FALSE(relay.edge);

  check_round_trip(*c);
  // For logs, no key shows, only where each came from; the URLs do show.
  std::string logged = to_yaml(*c);
  CHECK_FALSE(contains(logged, "yt-env-key"));
  CHECK_FALSE(contains(logged, "live_123_file"));
  CHECK_FALSE(contains(logged, "inline-key"));
  CHECK(contains(logged, "env SLUICE_RELAY_TEST_KEY"));
  CHECK(contains(logged, "file " + (dir / "twitch.key").string()));
  CHECK(contains(logged, "rtmps://a.rtmp.youtube.com/live2"));
  // With Show, the key is printed inline (that is what lets it read back).
  CHECK(contains(to_yaml(*c, Secrets::Show), "yt-env-key"));
  fs::remove_all(dir);
}

TEST_CASE("pull: defaults and explicit values") {
  auto d = load("apps:\n  live: { type: live, pull: { upstreams: [rtmp://origin/live] } }\n");
  REQUIRE_MESSAGE(d.ok(), d.error().message());
  const PullConfig& p = d->apps[0].relay.pull;
  CHECK(p.enabled());
  CHECK(p.upstreams == std::vector<std::string>{"rtmp://origin/live"});
  CHECK(p.on_demand);
  CHECK(p.idle == 10s);
  CHECK(p.streams.empty());
  CHECK(p.verify);
  CHECK_FALSE(d->apps[0].relay.edge);
  check_round_trip(*d);

  auto e = load(R"(apps:
  tv:
    type: live
    pull:
      upstreams: [rtmp://a.example/live, "rtmps://[fd00::1]:8443/live/{stream}"]
      on_demand: false
      idle: 1m
      streams: [news, sport]
      verify: no
)");
  REQUIRE_MESSAGE(e.ok(), e.error().message());
  const PullConfig& q = e->apps[0].relay.pull;
  CHECK(q.upstreams == std::vector<std::string>{"rtmp://a.example/live", "rtmps://[fd00::1]:8443/live/{stream}"});
  CHECK_FALSE(q.on_demand);
  CHECK(q.idle == 1min);
  CHECK(q.streams == std::vector<std::string>{"news", "sport"});
  CHECK_FALSE(q.verify);
  check_round_trip(*e);
  std::string text = to_yaml(*e);
  CHECK(contains(text, "pull:"));
  CHECK(contains(text, "on_demand: false"));
  CHECK_FALSE(contains(text, "origins"));

  // On demand with streams: only those names are pulled; idle 0 stops at once.
  auto f = load("apps:\n  live: { type: live, pull: { upstreams: [rtmp://o/live], idle: 0, streams: [x] } }\n");
  REQUIRE_MESSAGE(f.ok(), f.error().message());
  CHECK(f->apps[0].relay.pull.idle == 0ms);
  CHECK(f->apps[0].relay.pull.on_demand);
}

TEST_CASE("type: edge: a live app that pulls on demand from its origins") {
  auto c = load(R"(apps:
  edge:
    type: edge
    origins: [rtmp://origin-1:1935/live, rtmp://origin-2/live]
    push:
      - url: rtmp://archive/live
)");
  REQUIRE_MESSAGE(c.ok(), c.error().message());
  const AppConfig& a = c->apps[0];
  CHECK(a.type == AppType::Live);  // an edge is served like a live app
  CHECK(a.relay.edge);
  CHECK(a.relay.pull.upstreams == std::vector<std::string>{"rtmp://origin-1:1935/live", "rtmp://origin-2/live"});
  CHECK(a.relay.pull.on_demand);
  CHECK(a.relay.push.size() == 1);
  // A single URL is a list of one.
  auto one = load("apps:\n  e: { type: edge, origins: rtmp://o/live }\n");
  REQUIRE_MESSAGE(one.ok(), one.error().message());
  CHECK(one->apps[0].relay.pull.upstreams == std::vector<std::string>{"rtmp://o/live"});

  // Printed as type: edge with origins (not as a pull), and it reads back the same.
  std::string text = to_yaml(*c);
  CHECK(contains(text, "type: edge"));
  CHECK(contains(text, "origins:"));
  CHECK_FALSE(contains(text, "pull:"));
  CHECK(contains(text, "rtmp://origin-2/live"));
  check_round_trip(*c);
}

TEST_CASE("relay errors name the offending key") {
  const std::string live = "apps:\n  live:\n    type: live\n";
  // pull on an edge: the origins are its upstreams.
  CHECK(
      contains(error_of("apps:\n  e: { type: edge, origins: [rtmp://o/live], pull: { upstreams: [rtmp://o/live] } }\n"),
               "apps.e.pull: an edge pulls from its origins"));
  // origins on a live app.
  CHECK(contains(error_of(live + "    origins: [rtmp://o/live]\n"), "apps.live.origins: only valid for edge apps"));
  // An edge without origins, and with an empty list.
  CHECK(contains(error_of("apps:\n  e: { type: edge }\n"), "apps.e.origins: missing"));
  CHECK(contains(error_of("apps:\n  e: { type: edge, origins: [] }\n"), "apps.e.origins: needs at least one URL"));
  // Always on needs the names to pull.
  CHECK(contains(error_of(live + "    pull: { upstreams: [rtmp://o/live], on_demand: false }\n"),
                 "apps.live.pull: on_demand: false needs"));
  CHECK(contains(error_of(live + "    pull: { on_demand: true }\n"), "apps.live.pull: needs upstreams"));
  // At most 64 push targets.
  std::string many = live + "    push:\n";
  for (int i = 0; i < 65; ++i) many += "      - url: rtmp://t" + std::to_string(i) + "/live\n";
  CHECK(contains(error_of(many), "apps.live.push: at most 64 push targets"));
  std::string enough = live + "    push:\n";
  for (int i = 0; i < 64; ++i) enough += "      - url: rtmp://t" + std::to_string(i) + "/live\n";
  CHECK(load(enough).ok());
  // URLs that are not rtmp[s]://host/app, in push, pull and origins.
  CHECK(contains(error_of(live + "    push: [{ url: \"http://h/app\" }]\n"),
                 "apps.live.push[0].url: \"http://h/app\" must start with rtmp://, rtmps:// or srt://"));
  CHECK(contains(error_of(live + "    push: [{ url: rtmp://h }]\n"), "apps.live.push[0].url: \"rtmp://h\" has no app"));
  CHECK(contains(error_of(live + "    pull: { upstreams: [rtmp://o/live, srt://o/live] }\n"),
                 "apps.live.pull.upstreams[1]: \"srt://o/live\" is not srt://host:port?streamid=ID"));
  CHECK(contains(error_of(live + "    push: [{ url: \"srt://h:9000?streamid=x&mode=caller\" }]\n"),
                 "apps.live.push[0].url: \"srt://h:9000?streamid=x&mode=caller\" is not srt://"));
  CHECK(load(live + "    push: [{ url: \"srt://h:9000?streamid=publish:live/{stream}&latency=300\" }]\n").ok());
  CHECK(contains(error_of("apps:\n  e: { type: edge, origins: [\"rtmp:///live\"] }\n"),
                 "apps.e.origins[0]: \"rtmp:///live\" has no host"));
  // A push target without url, and a key from an unset variable.
  CHECK(contains(error_of(live + "    push: [{ key: abc }]\n"), "apps.live.push[0]: each push target needs a url"));
  ::unsetenv("SLUICE_RELAY_TEST_UNSET");
  CHECK(contains(error_of(live + "    push: [{ url: rtmp://h/app, key_env: SLUICE_RELAY_TEST_UNSET }]\n"),
                 "apps.live.push[0].key_env: the environment variable SLUICE_RELAY_TEST_UNSET is not set"));
  CHECK(contains(error_of(live + "    push: [{ url: rtmp://h/app, key: a, key_env: B }]\n"), "give only one of key"));
  // Unknown keys inside push and pull are errors too.
  CHECK(contains(error_of(live + "    push: [{ url: rtmp://h/app, stream: x }]\n"), "apps.live.push[0].stream"));
  CHECK(contains(error_of(live + "    pull: { upstreams: [rtmp://o/live], idel: 5s }\n"), "apps.live.pull.idel"));
  // Relays are live settings: a vod app refuses them.
  CHECK(contains(error_of("apps:\n  v: { type: vod, root: /x, push: [{ url: rtmp://h/app }] }\n"),
                 "apps.v.push: only valid for live apps"));
}
