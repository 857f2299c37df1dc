// Access settings: who may publish and play an app (keys, signed URLs, address rules), how many,
// the HTTP callbacks asked on each session, and the server-wide connection limits. Plain structs
// like config.hpp; access_schema.cpp reads them, docs/security.md explains them to users.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "config/address.hpp"

namespace sluice::config {

// A secret as loaded: its value (read from the YAML, a file or the environment when the
// configuration was loaded) and where it came from, which is all to_yaml prints of it.
struct Secret {
  std::string value;
  std::string origin;  // "inline", "file /etc/sluice/sign.key", "env SLUICE_PLAY_SECRET"

  // The value is the setting; where it was read from is not (to_yaml prints values inline).
  bool operator==(const Secret& o) const { return value == o.value; }
};

// ?expires=UNIX&sign=HEX URLs (server/access/signature.hpp): HMAC-SHA256 with this secret.
struct SignedUrlConfig {
  Secret secret;                                              // empty value: signed URLs are not used for this action
  std::chrono::milliseconds skew = std::chrono::seconds(30);  // tolerated clock difference

  bool enabled() const { return !secret.value.empty(); }
  bool operator==(const SignedUrlConfig&) const = default;
};

// apps.NAME.publish and apps.NAME.play. A client is admitted when its address passes deny and
// allow, and, if any credential is configured, it presents one that is valid: a key from `keys`,
// the key of its stream name from `stream_keys`, or a valid signature.
struct AccessRules {
  std::vector<Cidr> allow;                                       // empty: any address
  std::vector<Cidr> deny;                                        // checked first
  std::vector<std::string> keys;                                 // from keys, keys_file and keys_env together
  std::vector<std::string> key_origins;                          // for to_yaml: "2 inline", "file /etc/...", "env NAME"
  std::vector<std::pair<std::string, std::string>> stream_keys;  // stream name -> its key
  std::string stream_keys_origin;
  SignedUrlConfig signed_url;

  bool needs_credentials() const { return !keys.empty() || !stream_keys.empty() || signed_url.enabled(); }
  bool operator==(const AccessRules& o) const {
    return allow == o.allow && deny == o.deny && keys == o.keys && stream_keys == o.stream_keys &&
           signed_url == o.signed_url;
  }
};

// apps.NAME.limits: 0 means no limit.
struct AppLimits {
  uint32_t publishers = 0;          // streams published at once in this app
  uint32_t players = 0;             // players (RTMP and HTTP) of this app at once
  uint32_t players_per_stream = 0;  // players of one stream at once

  bool operator==(const AppLimits&) const = default;
};

// hooks: HTTP callbacks (server/access/hook_client.hpp). An empty URL is not called.
struct HooksConfig {
  std::string on_connect;
  std::string on_publish;
  std::string on_play;
  std::string on_publish_done;
  std::string on_play_done;
  std::string on_record_done;   // a recording's file is finished (apps.NAME.record)
  std::string on_stream_alert;  // a stream alert was raised or cleared (apps.NAME.alerts)
  std::chrono::milliseconds timeout = std::chrono::seconds(3);  // per attempt
  bool fail_open = false;      // a hook that gives no answer (timeout, refused, 5xx) admits instead of denying
  uint32_t done_attempts = 5;  // *_done notifications are retried up to this many attempts
  std::chrono::milliseconds retry_delay = std::chrono::seconds(1);  // doubles per attempt, up to 30s

  bool any_decision() const { return !on_connect.empty() || !on_publish.empty() || !on_play.empty(); }
  bool operator==(const HooksConfig&) const = default;
};

// limits: server-wide, over RTMP and HTTP and every worker; 0 means no limit. (limits.connections
// is rtmp.max_connections.)
struct ConnectionLimits {
  uint32_t per_ip = 0;  // open connections from one address

  bool operator==(const ConnectionLimits&) const = default;
};

}  // namespace sluice::config
