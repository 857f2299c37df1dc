// cluster: several Sluice nodes behind a load balancer, any node serving any stream, with stream
// ownership and node addresses kept in Redis (docs/cluster.md). Off unless a registry is given: a
// single node needs no Redis.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "config/access.hpp"

namespace sluice::config {

// redis://[[user]:password@]host[:port][/db]; rediss:// is refused (the client has no TLS).
struct RedisUrl {
  std::string host;  // without brackets for IPv6
  uint16_t port = 6379;
  uint32_t db = 0;
  std::string user;      // Redis 6 ACL user; empty: the default user
  std::string password;  // from the URL; cluster.password(_file|_env) takes precedence

  // nullopt with `why` set when the text is not such a URL.
  static std::optional<RedisUrl> parse(std::string_view text, std::string& why);
  // For logs and the API: never the password.
  std::string display() const;
};

// What a second publisher of a stream that another node owns gets (docs/cluster.md, "A second
// publisher on another node").
enum class DuplicatePublish : uint8_t {
  Takeover,  // the app's publish_conflict decides, as on one node (the default): takeover moves the claim
  Refuse,    // NetStream.Publish.BadName whatever the app says; the owner keeps it
};

// The query parameter with which a node plays another node's stream, carrying `token` (the owner
// admits such a play without the app's play rules, hooks and limits: its own players passed them
// on the pulling node).
inline constexpr const char* kClusterTokenParam = "sluice_cluster_token";

struct ClusterConfig {
  std::optional<RedisUrl> registry;        // none: no cluster
  std::string node_id;                     // unique per node; default the host name
  std::string advertise_rtmp;              // rtmp://HOST:PORT the other nodes pull from
  std::string advertise_http;              // http://HOST:PORT for the API and redirects; optional
  Secret password;                         // the Redis password (AUTH)
  Secret token;                            // the internal token nodes present to pull from each other
  std::chrono::milliseconds lease{10000};  // a stream's ownership lasts this long unless refreshed
  DuplicatePublish duplicate_publish = DuplicatePublish::Takeover;

  bool enabled() const { return registry.has_value(); }
  bool operator==(const ClusterConfig& o) const {
    return enabled() == o.enabled() && (!enabled() || registry->display() == o.registry->display()) &&
           node_id == o.node_id && advertise_rtmp == o.advertise_rtmp && advertise_http == o.advertise_http &&
           password == o.password && token == o.token && lease == o.lease && duplicate_publish == o.duplicate_publish;
  }
};

}  // namespace sluice::config
