// config/access_log.hpp: the access_log section (docs/access_log.md) as loaded, its errors, and
// to_yaml printing it back.
#include <doctest/doctest.h>

#include <string>

#include "config/config.hpp"
#include "config/load.hpp"
#include "load_helpers.hpp"

using namespace sluice;
using namespace sluice::config;
using namespace sluice::config::test;

namespace {
const char* kApps = "apps:\n  live: { type: live }\n";
}  // namespace

TEST_CASE("access_log: off by default; path and format read; relative paths from the file's directory") {
  auto c = load(kApps);
  REQUIRE(c.ok());
  CHECK_FALSE(c->access_log.enabled());
  CHECK(c->access_log.format == AccessLogFormat::Combined);

  c = load(std::string(kApps) + "access_log:\n  path: logs/access.log\n");
  REQUIRE(c.ok());
  CHECK(c->access_log.enabled());
  CHECK(c->access_log.path == "/srv/sluice/logs/access.log");
  CHECK(c->access_log.format == AccessLogFormat::Combined);

  c = load(std::string(kApps) + "access_log: { path: /var/log/sluice/access.log, format: JSON }\n");
  REQUIRE(c.ok());
  CHECK(c->access_log.path == "/var/log/sluice/access.log");
  CHECK(c->access_log.format == AccessLogFormat::Json);

  c = load(std::string(kApps) + "access_log: { path: stderr, format: common }\n");
  REQUIRE(c.ok());
  CHECK(c->access_log.path == "stderr");
  CHECK(c->access_log.format == AccessLogFormat::Common);

  c = load(std::string(kApps) + "access_log: { path: \"\", format: json }\n");
  REQUIRE(c.ok());
  CHECK_FALSE(c->access_log.enabled());
  CHECK(c->access_log.format == AccessLogFormat::Json);
}

TEST_CASE("access_log: precise errors") {
  const std::string head = std::string(kApps) + "access_log:\n";
  CHECK(contains(error_of(head + "  format: apache\n"), "access_log.format: must be combined, common or json"));
  CHECK(contains(error_of(head + "  path: logs/\n"), "access_log.path: names a directory"));
  CHECK(contains(error_of(head + "  path: [a, b]\n"), "access_log.path"));
  CHECK(contains(error_of(head + "  file: x.log\n"), "access_log.file: unknown key"));
  CHECK(contains(error_of(std::string(kApps) + "access_log: x.log\n"), "access_log"));
  CHECK(contains(error_of(std::string(kApps) + "acces_log: { path: x.log }\n"), "did you mean access_log?"));
}

TEST_CASE("access_log survives to_yaml and loading again; absent when off") {
  auto c = load(std::string(kApps) + "access_log: { path: access.log, format: common }\n");
  REQUIRE(c.ok());
  const std::string text = to_yaml(*c, Secrets::Show);
  CHECK(contains(text, "path: /srv/sluice/access.log"));
  CHECK(contains(text, "format: common"));
  auto again = load(text);
  REQUIRE(again.ok());
  CHECK(again->access_log == c->access_log);

  auto off = load(kApps);
  REQUIRE(off.ok());
  CHECK_FALSE(contains(to_yaml(*off, Secrets::Show), "access_log"));
}
