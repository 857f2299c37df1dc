// config/webrtc.hpp: the webrtc section (docs/webrtc.md) as loaded, its errors, and to_yaml
// printing it back.
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

TEST_CASE("webrtc: off without a listener; defaults; every setting read back") {
  auto c = load(kApps);
  REQUIRE(c.ok());
  CHECK_FALSE(c->webrtc.enabled());
  c = load(std::string(kApps) + "webrtc:\n  listen: 127.0.0.1:8189\n");
  REQUIRE(c.ok());
  CHECK(c->webrtc.enabled());
  CHECK(c->webrtc.listen[0].port == 8189);
  CHECK(c->webrtc.advertise.empty());
  CHECK(c->webrtc.session_timeout == 30000ms);
  CHECK(c->webrtc.max_sessions == 1000);
  CHECK(c->webrtc.publish_bitrate == 8'000'000);
  c = load(std::string(kApps) +
           "webrtc:\n  listen: 0.0.0.0:8189\n  advertise: [203.0.113.7, '2001:db8::1']\n  session_timeout: 10s\n"
           "  max_sessions: 50\n  publish_bitrate: 2500000\n");
  REQUIRE(c.ok());
  CHECK(c->webrtc.advertise == std::vector<std::string>{"203.0.113.7", "2001:db8::1"});
  CHECK(c->webrtc.session_timeout == 10000ms);
  CHECK(c->webrtc.max_sessions == 50);
  CHECK(c->webrtc.publish_bitrate == 2'500'000);
  auto again = load(to_yaml(*c, Secrets::Show));
  REQUIRE(again.ok());
  CHECK(again->webrtc == c->webrtc);
}

TEST_CASE("webrtc: precise errors") {
  const std::string head = std::string(kApps) + "webrtc:\n  listen: 127.0.0.1:8189\n";
  CHECK(contains(error_of(head + "  advertise: [example.com]\n"), "is not an IPv4 or IPv6 address"));
  CHECK(contains(error_of(head + "  advertise: [10.0.0.0/8]\n"), "is not an IPv4 or IPv6 address"));
  CHECK(contains(error_of(head + "  session_timeout: 1s\n"), "session_timeout"));
  CHECK(contains(error_of(head + "  max_sessions: 0\n"), "max_sessions"));
  CHECK(contains(error_of(head + "  publish_bitrate: 5000\n"), "publish_bitrate"));
  CHECK(contains(error_of(head + "  port: 5\n"), "port"));
  CHECK(contains(error_of(std::string(kApps) + "webrtc:\n  listen: [127.0.0.1:1, 127.0.0.1:2]\n"), "one UDP address"));
}
