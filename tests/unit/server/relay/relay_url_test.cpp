// server/relay/relay_url.hpp and backoff.hpp: how a relay URL splits into what the RTMP client
// sends (host, port, app, tcUrl, name), which names it publishes or plays, and when it retries.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>

#include "config/relay_schema.hpp"
#include "server/relay/backoff.hpp"
#include "server/relay/relay_url.hpp"

using namespace sluice;
using namespace sluice::server;

TEST_CASE("parse: host, default port, app, no name") {
  auto u = RelayUrl::parse("rtmp://live.example.com/app");
  REQUIRE(u);
  CHECK_FALSE(u->tls);
  CHECK(u->host == "live.example.com");
  CHECK(u->port == 1935);
  CHECK(u->app == "app");
  CHECK(u->name.empty());
  CHECK(u->tc_url == "rtmp://live.example.com/app");
  CHECK(u->display() == u->tc_url);
}

TEST_CASE("parse: explicit ports, rtmps, IPv6") {
  auto p = RelayUrl::parse("rtmp://10.0.0.1:1936/live/cam");
  REQUIRE(p);
  CHECK(p->host == "10.0.0.1");
  CHECK(p->port == 1936);
  CHECK(p->app == "live");
  CHECK(p->name == "cam");
  CHECK(p->tc_url == "rtmp://10.0.0.1:1936/live");  // the name stays out of tcUrl

  // The default port, even when spelled out, is left out of tcUrl (as FFmpeg sends it).
  auto d = RelayUrl::parse("rtmp://h:1935/live");
  REQUIRE(d);
  CHECK(d->port == 1935);
  CHECK(d->tc_url == "rtmp://h/live");
  CHECK(RelayUrl::parse("rtmp://h:65535/a")->port == 65535);

  auto s = RelayUrl::parse("rtmps://a.rtmp.youtube.com/live2/abcd-efgh");
  REQUIRE(s);
  CHECK(s->tls);
  CHECK(s->port == 443);
  CHECK(s->tc_url == "rtmps://a.rtmp.youtube.com/live2");
  // 1935 is not the default for rtmps, so it is kept; 443 is dropped.
  CHECK(RelayUrl::parse("rtmps://h:1935/a")->tc_url == "rtmps://h:1935/a");
  CHECK(RelayUrl::parse("rtmps://h:443/a")->tc_url == "rtmps://h/a");

  auto v6 = RelayUrl::parse("rtmp://[::1]:1936/live/x");
  REQUIRE(v6);
  CHECK(v6->host == "::1");  // without brackets, for the resolver
  CHECK(v6->port == 1936);
  CHECK(v6->tc_url == "rtmp://[::1]:1936/live");  // brackets back in the URL
  auto v6d = RelayUrl::parse("rtmp://[fd00::2]/live");
  REQUIRE(v6d);
  CHECK(v6d->host == "fd00::2");
  CHECK(v6d->port == 1935);
  CHECK(v6d->tc_url == "rtmp://[fd00::2]/live");
}

TEST_CASE("parse: everything after the app is the name, query and further slashes included") {
  auto q = RelayUrl::parse("rtmp://h/live/cam?key=abc&x=1");
  REQUIRE(q);
  CHECK(q->app == "live");
  CHECK(q->name == "cam?key=abc&x=1");
  CHECK(q->tc_url == "rtmp://h/live");
  auto deep = RelayUrl::parse("rtmp://h/app/inst/name");
  REQUIRE(deep);
  CHECK(deep->app == "app");
  CHECK(deep->name == "inst/name");
  // A trailing slash gives an empty name: the local name is used.
  auto trailing = RelayUrl::parse("rtmp://h/app/");
  REQUIRE(trailing);
  CHECK(trailing->name.empty());
}

TEST_CASE("parse refuses what is not rtmp[s]://host[:port]/app") {
  for (std::string bad : {
           "",                         // nothing
           "http://h/app",             // other schemes
           "RTMP://h/app",             // the scheme is matched as written
           "rtmpt://h/app",            // tunnelled RTMP is not supported
           "srt://h:9000/app",         //
           "rtmp:/h/app",              // one slash
           "rtmp://h",                 // no app
           "rtmp://h/",                // empty app
           "rtmp://h//name",           // empty app before the name
           "rtmp://h/?x=1",            // a query where the app should be
           "rtmp:///app",              // no host
           "rtmp://:1935/app",         // no host, only a port
           "rtmp://[]/app",            // empty IPv6 host
           "rtmp://[::1/app",          // unclosed bracket
           "rtmp://[::1]x/app",        // junk after the bracket
           "rtmp://h:0/app",           // port 0
           "rtmp://h:70000/app",       // port out of range
           "rtmp://h:4294967297/app",  // wraps around 32 bits
           "rtmp://h:abc/app",         // not a number
           "rtmp://h:19x/app",         // trailing junk in the port
           "rtmp://h:-1/app",          //
           "rtmp://user@h/app",        // user info is refused (it would leak into logs)
           "rtmp://user:pw@h:1935/app",
       }) {
    CAPTURE(bad);
    CHECK_FALSE(RelayUrl::parse(bad));
  }
}

// "host:" names no port: refused, not read as the default port.
TEST_CASE("parse refuses an empty port after ':'") {
  CHECK_FALSE(RelayUrl::parse("rtmp://h:/app"));
  CHECK_FALSE(RelayUrl::parse("rtmp://[::1]:/app"));
}

// An IPv6 literal needs its brackets: without them its last ':' would be read as the port's and
// the relay would connect somewhere else. Brackets inside a name are refused too.
TEST_CASE("parse refuses IPv6 without brackets and stray brackets in a host") {
  for (std::string bad :
       {"rtmp://fd00::1/app", "rtmp://::1/app", "rtmp://::1:1935/app", "rtmp://a[::1]:1935/app", "rtmp://a]b/app"}) {
    CAPTURE(bad);
    CHECK_FALSE(RelayUrl::parse(bad));
  }
}

TEST_CASE("stream_name: the key, else the URL's name with {stream} replaced, else the local name") {
  auto plain = RelayUrl::parse("rtmp://h/live");
  REQUIRE(plain);
  CHECK(plain->stream_name("cam") == "cam");
  CHECK(plain->stream_name("cam", "sk-123") == "sk-123");  // a platform's stream key wins

  auto fixed = RelayUrl::parse("rtmp://h/live/other");
  REQUIRE(fixed);
  CHECK(fixed->stream_name("cam") == "other");
  CHECK(fixed->stream_name("cam", "sk-123") == "sk-123");

  auto templ = RelayUrl::parse("rtmp://h/live/{stream}_hd/{stream}");
  REQUIRE(templ);
  CHECK(templ->stream_name("cam") == "cam_hd/cam");  // every occurrence
  CHECK(templ->stream_name("cam", "k") == "k");
  CHECK(RelayUrl::parse("rtmp://h/live/pre-{stream}?x=1")->stream_name("cam") == "pre-cam?x=1");
  // A local name that itself holds {stream} is put in once, not replaced again (no endless loop).
  CHECK(templ->stream_name("{stream}") == "{stream}_hd/{stream}");
  // An empty local name just removes the placeholder.
  CHECK(templ->stream_name("") == "_hd/");
  // "{stream" without its brace is not a placeholder.
  CHECK(RelayUrl::parse("rtmp://h/live/{stream")->stream_name("cam") == "{stream");
}

// The config check at load time promises that a loaded URL always parses (relay_url.hpp), and
// whatever parses is accepted by the config.
TEST_CASE("config::relay_url_problem agrees with parse on good URLs") {
  for (std::string good : {"rtmp://h/app", "rtmp://h:1936/app/name", "rtmps://h/app/{stream}", "rtmp://[::1]:1936/a",
                           "rtmp://h/app/n?k=v"}) {
    CAPTURE(good);
    CHECK(config::relay_url_problem(good) == "");
    CHECK(RelayUrl::parse(good));
  }
  for (std::string bad :
       {"http://h/app", "rtmp://h", "rtmp://h/", "rtmp:///app", "rtmp://h//x", "rtmp://h/?x", "rtmp://h/a b"}) {
    CAPTURE(bad);
    CHECK(config::relay_url_problem(bad) != "");
  }
}

// What the config accepts always parses (config/relay_url.hpp).
TEST_CASE("config::relay_url_problem refuses what parse refuses") {
  for (std::string bad : {"rtmp://h:0/app", "rtmp://h:70000/app", "rtmp://h:abc/app", "rtmp://user@h/app",
                          "rtmp://[::1/app", "rtmp://[]/app", "rtmp://:1935/app"}) {
    CAPTURE(bad);
    CHECK_FALSE(RelayUrl::parse(bad));
    CHECK(config::relay_url_problem(bad) != "");
  }
}

TEST_CASE("Backoff: the first delay is 0.5..1 s, then it doubles up to 30 s") {
  // Many draws, since each delay is random within [full / 2, full].
  for (int run = 0; run < 200; ++run) {
    Backoff b;
    uint64_t first = b.next_delay_ms();
    CHECK(first >= 500);
    CHECK(first <= 1000);
    uint64_t full = Backoff::kFirstMs;
    for (int i = 2; i <= 12; ++i) {
      full = std::min<uint64_t>(full * 2, Backoff::kMaxMs);
      uint64_t d = b.next_delay_ms();
      CAPTURE(i);
      CHECK(d >= full / 2);
      CHECK(d <= full);
      CHECK(d <= Backoff::kMaxMs);
    }
    // After enough failures every delay is at least half the ceiling: the waits really grew.
    CHECK(b.next_delay_ms() >= Backoff::kMaxMs / 2);
    CHECK(b.failures() == 13);
  }
}

TEST_CASE("Backoff: never above 30 s, however many failures") {
  Backoff b;
  for (int i = 0; i < 10'000; ++i) {
    uint64_t d = b.next_delay_ms();
    if (d > Backoff::kMaxMs || d < Backoff::kFirstMs / 2) {
      FAIL("delay " << d << " after " << i << " failures");
    }
  }
}

TEST_CASE("Backoff: reset() starts again from the first range") {
  Backoff b;
  for (int i = 0; i < 8; ++i) (void)b.next_delay_ms();
  CHECK(b.next_delay_ms() >= Backoff::kMaxMs / 2);
  b.reset();
  CHECK(b.failures() == 0);
  uint64_t d = b.next_delay_ms();
  CHECK(d >= 500);
  CHECK(d <= 1000);
  CHECK(b.failures() == 1);
}

TEST_CASE("srt:// URLs: host and port, the stream id decoded, the query's settings checked") {
  auto u =
      RelayUrl::parse("srt://10.0.0.1:9000?streamid=%23!::r=live/{stream},m=publish&latency=300&passphrase=0123456789");
  REQUIRE(u);
  CHECK(u->srt);
  CHECK(u->host == "10.0.0.1");
  CHECK(u->port == 9000);
  CHECK(u->stream_id == "#!::r=live/{stream},m=publish");
  CHECK(u->latency_ms == 300);
  CHECK(u->passphrase == "0123456789");
  CHECK(u->stream_name("cam") == "#!::r=live/cam,m=publish");
  CHECK(u->display() == "srt://10.0.0.1:9000");  // no stream id: it may hold a key
  auto v6 = RelayUrl::parse("srt://[::1]:9000?streamid=read:live/x");
  REQUIRE(v6);
  CHECK(v6->host == "::1");
  CHECK(v6->display() == "srt://[::1]:9000");
  CHECK_FALSE(RelayUrl::parse("srt://h:9000"));                              // no stream id
  CHECK_FALSE(RelayUrl::parse("srt://h?streamid=a"));                        // no port
  CHECK_FALSE(RelayUrl::parse("srt://h:9000/live?streamid=a"));              // a path
  CHECK_FALSE(RelayUrl::parse("srt://h:9000?streamid=a&mode=listener"));     // an unknown setting
  CHECK_FALSE(RelayUrl::parse("srt://h:9000?streamid=a&passphrase=short"));  // under 10 characters
  CHECK_FALSE(RelayUrl::parse("srt://h:9000?streamid=a&latency=5"));         // under 20 ms
  CHECK_FALSE(RelayUrl::parse("srt://h:9000?streamid=a%2"));                 // a broken escape
  CHECK_FALSE(RelayUrl::parse("srt://::1:9000?streamid=a"));                 // IPv6 without brackets
}
