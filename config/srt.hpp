// The SRT side (docs/srt.md): `srt:` at the top (listeners and the transport's settings) and
// `apps.NAME.srt` (what an app may change for its own streams). SRT is off unless `srt.listen`
// names at least one UDP address.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

#include "config/access.hpp"
#include "config/address.hpp"

namespace sluice::config {

// What an app may set for itself: its streams' latency and passphrase.
struct SrtAppConfig {
  std::optional<std::chrono::milliseconds> latency;
  Secret passphrase;  // empty: the server's

  bool operator==(const SrtAppConfig&) const = default;
};

struct SrtConfig {
  std::vector<ListenAddress> listen;  // UDP; empty: SRT is off
  // SRTO_LATENCY, both directions (20 ms..10 s): the time SRT may spend retransmitting. Four
  // round trips are the usual advice; 120 ms is libsrt's default.
  std::chrono::milliseconds latency{120};
  // SRTO_PASSPHRASE (10..79 characters): AES encryption, and only callers that know it get in.
  Secret passphrase;
  uint32_t pbkeylen = 16;  // 16, 24 or 32: AES-128, -192, -256 (with a passphrase)
  // SRTO_MAXBW, bytes per second for one connection's sending (retransmissions included); 0:
  // libsrt's default (SRTO_MAXBW -1: 1 Gb/s).
  uint64_t max_bandwidth = 0;
  uint32_t payload_size = 1316;  // SRTO_PAYLOADSIZE: 7 MPEG-TS packets (188..1456, a multiple of 188)
  // SRTO_PEERIDLETIMEO: a peer silent this long (no data, no keepalive) is gone (1..60 s).
  std::chrono::milliseconds peer_idle_timeout{5000};

  bool enabled() const { return !listen.empty(); }
  bool operator==(const SrtConfig&) const = default;
};

}  // namespace sluice::config
