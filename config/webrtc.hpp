// The WebRTC side (docs/webrtc.md): `webrtc:` at the top. WHIP (publish) and WHEP (play) are
// signalled over the HTTP listeners (POST /APP/STREAM/whip and /whep); the media of every session
// of a worker loop arrives on one UDP port: the `listen` port for the first loop, the next ports
// for the others (a session's answer names its loop's port). WebRTC is off unless `listen` is set.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "config/address.hpp"

namespace sluice::config {

struct WebrtcConfig {
  std::vector<ListenAddress> listen;  // UDP, one address; empty: WebRTC is off
  // The addresses put in the answer's candidates (a public address behind NAT); empty: the listen
  // address, or 127.0.0.1 when that is 0.0.0.0.
  std::vector<std::string> advertise;
  // A session whose ICE and DTLS have not completed this long after its offer, or that has heard
  // nothing from its peer this long (no STUN consent check, no RTCP), is closed.
  std::chrono::milliseconds session_timeout{30'000};
  uint32_t max_sessions = 1000;  // per server: offers past it get 503
  // The bitrate (bits/s) WHIP publishers are told they may send (REMB, each second): a browser's
  // encoder ramps up to min(this, its own maximum) at once, and loss reported back slows it.
  uint64_t publish_bitrate = 8'000'000;

  bool enabled() const { return !listen.empty(); }
  bool operator==(const WebrtcConfig&) const = default;
};

}  // namespace sluice::config
