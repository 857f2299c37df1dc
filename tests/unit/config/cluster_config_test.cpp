// config/cluster.hpp: the cluster section (docs/cluster.md) as loaded, its errors, the Redis URL
// rules, and to_yaml printing it back without the secrets unless asked.
#include <doctest/doctest.h>

#include <cstdlib>
#include <string>

#include "config/cluster.hpp"
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

TEST_CASE("no cluster section: a single node, no registry") {
  auto c = load(kApps);
  REQUIRE(c.ok());
  CHECK_FALSE(c->cluster.enabled());
}

TEST_CASE("cluster: registry, node, advertised addresses, secrets and lease") {
  ::setenv("SLUICE_TEST_CLUSTER_TOKEN", "internal-pull-token", 1);
  auto c = load(std::string(kApps) +
                "cluster:\n  registry: redis://10.0.0.9:6380/2\n  node_id: edge-1\n"
                "  advertise: { rtmp: rtmp://10.0.0.5:1935, http: http://10.0.0.5:8080 }\n"
                "  password: hunter2\n  token_env: SLUICE_TEST_CLUSTER_TOKEN\n  lease: 6s\n"
                "  duplicate_publish: refuse\n");
  REQUIRE(c.ok());
  const ClusterConfig& k = c->cluster;
  CHECK(k.enabled());
  CHECK(k.registry->host == "10.0.0.9");
  CHECK(k.registry->port == 6380);
  CHECK(k.registry->db == 2);
  CHECK(k.node_id == "edge-1");
  CHECK(k.advertise_rtmp == "rtmp://10.0.0.5:1935");
  CHECK(k.advertise_http == "http://10.0.0.5:8080");
  CHECK(k.password.value == "hunter2");
  CHECK(k.token.value == "internal-pull-token");
  CHECK(k.token.origin == "env SLUICE_TEST_CLUSTER_TOKEN");
  CHECK(k.lease == 6000ms);
  CHECK(k.duplicate_publish == DuplicatePublish::Refuse);

  // Redacted for logs; with Show it loads back equal.
  const std::string shown = to_yaml(*c, Secrets::Redact);
  CHECK(shown.find("hunter2") == std::string::npos);
  CHECK(shown.find("internal-pull-token") == std::string::npos);
  auto again = load(to_yaml(*c, Secrets::Show));
  REQUIRE(again.ok());
  CHECK(again->cluster == k);
}

TEST_CASE("cluster: the node id defaults to server_id, the password may be in the URL") {
  auto c = load(std::string(kApps) +
                "server_id: origin-a\ncluster:\n  registry: redis://:s3cret@127.0.0.1\n"
                "  advertise: rtmp://127.0.0.1:1935\n  token: t0k3n\n");
  REQUIRE(c.ok());
  CHECK(c->cluster.node_id == "origin-a");
  CHECK(c->cluster.registry->port == 6379);
  CHECK(c->cluster.password.value == "s3cret");
  CHECK(c->cluster.lease == 10000ms);
  CHECK(c->cluster.duplicate_publish == DuplicatePublish::Takeover);    // the apps' publish_conflict decides
  CHECK(c->cluster.registry->display() == "redis://127.0.0.1:6379/0");  // never the password
}

TEST_CASE("cluster: what is missing or wrong is said, and a password is never echoed") {
  const std::string head = std::string(kApps) + "cluster:\n";
  CHECK(contains(error_of(head + "  advertise: rtmp://h:1\n  token: t\n"), "needs registry"));
  CHECK(contains(error_of(head + "  registry: redis://h\n  token: t\n"), "needs advertise"));
  CHECK(contains(error_of(head + "  registry: redis://h\n  advertise: rtmp://h:1\n"), "needs token"));
  CHECK(contains(error_of(head + "  registry: rediss://h\n  advertise: rtmp://h:1\n  token: t\n"), "not supported"));
  const std::string bad_port =
      error_of(head + "  registry: redis://:pw-secret@h:99999\n  advertise: rtmp://h:1\n  token: t\n");
  CHECK(contains(bad_port, "1..65535"));
  CHECK_FALSE(contains(bad_port, "pw-secret"));
  CHECK(contains(error_of(head + "  registry: redis://h/99\n  advertise: rtmp://h:1\n  token: t\n"), "0..15"));
  CHECK(contains(error_of(head + "  registry: redis://h\n  advertise: http://h:1\n  token: t\n"), "rtmp://HOST:PORT"));
  CHECK(contains(error_of(head + "  registry: redis://h\n  advertise: rtmp://h:1/app\n  token: t\n"),
                 "rtmp://HOST:PORT"));
  CHECK(contains(error_of(head + "  registry: redis://h\n  node_id: a b\n  advertise: rtmp://h:1\n  token: t\n"),
                 "node_id"));
  CHECK(
      contains(error_of(head + "  registry: redis://h\n  advertise: rtmp://h:1\n  token: t\n  lease: 1s\n"), "lease"));
  CHECK(
      contains(error_of(head + "  registry: redis://h\n  advertise: rtmp://h:1\n  token: t\n  duplicate_publish: x\n"),
               "refuse or takeover"));
}

TEST_CASE("RedisUrl: IPv6 hosts, users, defaults") {
  std::string why;
  auto a = RedisUrl::parse("redis://[::1]:7000/3", why);
  REQUIRE(a);
  CHECK(a->host == "::1");
  CHECK(a->port == 7000);
  CHECK(a->db == 3);
  CHECK(a->display() == "redis://[::1]:7000/3");
  auto b = RedisUrl::parse("redis://app:pw@cache.internal", why);
  REQUIRE(b);
  CHECK(b->user == "app");
  CHECK(b->password == "pw");
  CHECK(b->host == "cache.internal");
  CHECK(b->port == 6379);
  CHECK_FALSE(RedisUrl::parse("http://h", why));
  CHECK_FALSE(RedisUrl::parse("redis://", why));
  CHECK_FALSE(RedisUrl::parse("redis://[::1", why));
  CHECK_FALSE(RedisUrl::parse("redis://h:0", why));
  CHECK_FALSE(RedisUrl::parse("redis://h:", why));
  CHECK_FALSE(RedisUrl::parse("redis://h/x", why));
}
