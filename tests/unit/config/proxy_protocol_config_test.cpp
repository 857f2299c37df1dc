// config/config.hpp ProxyProtocolConfig: <family>.proxy_protocol and proxy_protocol_from as loaded
// for rtmp, rtmps, http and https, the errors, and to_yaml printing them back
// (docs/proxy_protocol.md, docs/configuration.md).
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

// An rtmps and an https section with certificate paths (loading does not open them).
std::string tls_sections(const std::string& extra) {
  return "rtmps: { listen: [443], cert: c.pem, key: k.pem" + extra +
         " }\n"
         "https: { listen: [8443], cert: c.pem, key: k.pem" +
         extra + " }\n";
}
}  // namespace

TEST_CASE("proxy_protocol: off by default on every listener family") {
  auto c = load(std::string(kApps) + "http: { listen: [8080] }\n" + tls_sections(""));
  REQUIRE(c.ok());
  CHECK_FALSE(c->rtmp.proxy_protocol.enabled);
  CHECK_FALSE(c->rtmps.proxy_protocol.enabled);
  CHECK_FALSE(c->http.proxy_protocol.enabled);
  CHECK_FALSE(c->https.proxy_protocol.enabled);
  CHECK(c->rtmp.proxy_protocol.from.empty());
}

TEST_CASE("proxy_protocol: set per family, each on its own") {
  auto rtmp_only = load(std::string(kApps) + "rtmp: { proxy_protocol: true }\nhttp: { listen: [8080] }\n");
  REQUIRE(rtmp_only.ok());
  CHECK(rtmp_only->rtmp.proxy_protocol.enabled);
  CHECK_FALSE(rtmp_only->http.proxy_protocol.enabled);

  auto http_only = load(std::string(kApps) + "http: { listen: [8080], proxy_protocol: yes }\n");
  REQUIRE(http_only.ok());
  CHECK_FALSE(http_only->rtmp.proxy_protocol.enabled);
  CHECK(http_only->http.proxy_protocol.enabled);

  auto tls = load(std::string(kApps) + "http: {}\n" + tls_sections(", proxy_protocol: true"));
  REQUIRE(tls.ok());
  CHECK(tls->rtmps.proxy_protocol.enabled);
  CHECK(tls->https.proxy_protocol.enabled);
  CHECK_FALSE(tls->rtmp.proxy_protocol.enabled);
  CHECK_FALSE(tls->http.proxy_protocol.enabled);
}

TEST_CASE("proxy_protocol_from: the balancers' addresses, as CIDRs") {
  auto c = load(std::string(kApps) +
                "rtmp:\n  proxy_protocol: true\n  proxy_protocol_from: [10.0.0.0/8, 192.0.2.7, 'fd00::/8']\n");
  REQUIRE(c.ok());
  const auto& from = c->rtmp.proxy_protocol.from;
  REQUIRE(from.size() == 3);
  CHECK(from[0].to_string() == "10.0.0.0/8");
  CHECK(from[1].to_string() == "192.0.2.7/32");
  CHECK(from[2].to_string() == "fd00::/8");
  CHECK(c->http.proxy_protocol.from.empty());
}

TEST_CASE("proxy_protocol: errors name the key") {
  const std::string apps = kApps;
  std::string e = error_of(apps + "rtmp: { proxy_protocol: maybe }\n");
  CHECK(contains(e, "rtmp.proxy_protocol"));
  e = error_of(apps + "http: { proxy_protocol: 1.5 }\n");
  CHECK(contains(e, "http.proxy_protocol"));
  e = error_of(apps + "rtmp: { proxy_protocol: true, proxy_protocol_from: [10.0.0.300/8] }\n");
  CHECK(contains(e, "rtmp.proxy_protocol_from"));
  e = error_of(apps + "rtmp: { proxy_protocol: true, proxy_protocol_from: 7 }\n");
  CHECK(contains(e, "rtmp.proxy_protocol_from"));
  // A list of balancers without the switch does nothing: refused, not ignored.
  e = error_of(apps + "http: { proxy_protocol_from: [10.0.0.1] }\n");
  CHECK(contains(e, "http.proxy_protocol_from"));
  CHECK(contains(e, "only valid with proxy_protocol: true"));
  e = error_of(apps + "rtmp: { proxy_protocol: false, proxy_protocol_from: [10.0.0.1] }\n");
  CHECK(contains(e, "only valid with proxy_protocol: true"));
  e = error_of(apps + "http: {}\n" + tls_sections(", proxy_protocol_from: [10.0.0.1]"));
  CHECK(contains(e, "rtmps.proxy_protocol_from"));
  CHECK(contains(e, "https.proxy_protocol_from"));
  // A typo gets the usual unknown-key message.
  CHECK(contains(error_of(apps + "rtmp: { proxy_protocl: true }\n"), "proxy_protocl"));
}

TEST_CASE("proxy_protocol survives to_yaml and loading again") {
  auto c = load(std::string(kApps) +
                "rtmp: { proxy_protocol: true, proxy_protocol_from: [10.0.0.0/8] }\n"
                "http: { listen: [8080], proxy_protocol: true }\n" +
                tls_sections(", proxy_protocol: true, proxy_protocol_from: [192.0.2.0/24]"));
  REQUIRE(c.ok());
  const std::string text = to_yaml(*c, Secrets::Show);
  CHECK(contains(text, "proxy_protocol: true"));
  CHECK(contains(text, "proxy_protocol_from: [10.0.0.0/8]"));
  CHECK(contains(text, "proxy_protocol_from: [192.0.2.0/24]"));
  auto again = load(text);
  REQUIRE(again.ok());
  CHECK(again->rtmp.proxy_protocol == c->rtmp.proxy_protocol);
  CHECK(again->rtmps.proxy_protocol == c->rtmps.proxy_protocol);
  CHECK(again->http.proxy_protocol == c->http.proxy_protocol);
  CHECK(again->https.proxy_protocol == c->https.proxy_protocol);
  CHECK(*again == *c);

  auto off = load(kApps);
  REQUIRE(off.ok());
  const std::string plain = to_yaml(*off, Secrets::Show);
  CHECK(contains(plain, "proxy_protocol: false"));
  CHECK_FALSE(contains(plain, "proxy_protocol_from"));
}
