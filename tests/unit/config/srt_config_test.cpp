// config/srt.hpp: the srt section and apps.NAME.srt (docs/srt.md) as loaded, their errors, and
// to_yaml printing them back without the passphrase unless asked.
#include <doctest/doctest.h>

#include <cstdlib>
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

TEST_CASE("srt: off without a section or a listener; defaults") {
  auto c = load(kApps);
  REQUIRE(c.ok());
  CHECK_FALSE(c->srt.enabled());
  c = load(std::string(kApps) + "srt:\n  listen: 127.0.0.1:9000\n");
  REQUIRE(c.ok());
  CHECK(c->srt.enabled());
  CHECK(c->srt.listen.size() == 1);
  CHECK(c->srt.listen[0].port == 9000);
  CHECK(c->srt.latency == 120ms);
  CHECK(c->srt.pbkeylen == 16);
  CHECK(c->srt.payload_size == 1316);
  CHECK(c->srt.peer_idle_timeout == 5000ms);
  CHECK(c->srt.passphrase.value.empty());
}

TEST_CASE("srt: every setting, a passphrase from the environment, an app's own") {
  ::setenv("SLUICE_TEST_SRT_PASS", "correct-horse-battery", 1);
  auto c = load(
      "apps:\n  live: { type: live, srt: { latency: 400ms, passphrase: app-secret-123 } }\n"
      "srt:\n  listen: [0.0.0.0:9000, '[::]:9001']\n  latency: 200ms\n  passphrase_env: SLUICE_TEST_SRT_PASS\n"
      "  pbkeylen: 32\n  max_bandwidth: 10MiB\n  payload_size: 1316\n  peer_idle_timeout: 8s\n");
  REQUIRE(c.ok());
  const SrtConfig& s = c->srt;
  CHECK(s.listen.size() == 2);
  CHECK(s.latency == 200ms);
  CHECK(s.passphrase.value == "correct-horse-battery");
  CHECK(s.passphrase.origin == "env SLUICE_TEST_SRT_PASS");
  CHECK(s.pbkeylen == 32);
  CHECK(s.max_bandwidth == 10 * 1024 * 1024);
  CHECK(s.peer_idle_timeout == 8000ms);
  const AppConfig* live = c->find_app("live");
  REQUIRE(live);
  REQUIRE(live->srt.latency);
  CHECK(*live->srt.latency == 400ms);
  CHECK(live->srt.passphrase.value == "app-secret-123");

  const std::string shown = to_yaml(*c, Secrets::Redact);
  CHECK(shown.find("correct-horse") == std::string::npos);
  CHECK(shown.find("app-secret-123") == std::string::npos);
  auto again = load(to_yaml(*c, Secrets::Show));
  REQUIRE(again.ok());
  CHECK(again->srt == s);
  CHECK(again->find_app("live")->srt == live->srt);
}

TEST_CASE("srt: what is wrong is said") {
  const std::string head = std::string(kApps) + "srt:\n  listen: 127.0.0.1:9000\n";
  CHECK(contains(error_of(head + "  passphrase: short\n"), "10 to 79 characters"));
  CHECK(contains(error_of(head + "  pbkeylen: 20\n"), "16, 24 or 32"));
  CHECK(contains(error_of(head + "  payload_size: 1000\n"), "multiple of 188"));
  CHECK(contains(error_of(head + "  payload_size: 1500\n"), "payload_size"));
  CHECK(contains(error_of(head + "  latency: 5ms\n"), "latency"));
  CHECK(contains(error_of(head + "  lateny: 200ms\n"), "lateny"));
  CHECK(contains(error_of("apps:\n  live: { type: live, srt: { latency: 20s } }\n"), "latency"));
  CHECK(contains(error_of("apps:\n  live: { type: live, srt: { pbkeylen: 16 } }\n"), "pbkeylen"));
}
