// What Sluice decides about an SRT caller during its handshake, before the connection exists
// (docs/srt.md, "Refusals"): libsrt asks from its own thread, with the caller's stream id and
// address, and a refusal there reaches the client as a reject reason it can print. Only what needs
// no round trip and no loop state is decided here: the stream id's form, the app, the app's
// address and key rules (server/access/policy.hpp) and its SRT settings. Hooks, limits and the
// name's current publisher are the loop's business once the connection is accepted (the access
// gate decides them again, with the rest).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "config/config.hpp"
#include "protocol/srt_stream_id.hpp"

namespace sluice::server {

// SRT's user reject reasons: 1000 + an HTTP status (libsrt's SRT_REJX_*), so that a client can say
// "403" and a person can read it.
inline constexpr int kSrtRejectBadRequest = 1400;    // the stream id is not one Sluice reads
inline constexpr int kSrtRejectUnauthorized = 1401;  // a key or signed URL is needed and missing
inline constexpr int kSrtRejectForbidden = 1403;     // the rules refuse (a wrong key, an address)
inline constexpr int kSrtRejectNotFound = 1404;      // no such app (or not a live one)
inline constexpr int kSrtRejectConflict = 1409;      // the name is published and kept (publish_conflict)
inline constexpr int kSrtRejectOverload = 1503;      // connection or stream limits

struct SrtVerdict {
  int reject = 0;      // 0: accepted; else one of the codes above
  std::string reason;  // for the log line
  protocol::SrtStreamId id;
  const config::AppConfig* app = nullptr;
  // The app's own SRT settings, to set on the accepted socket (nothing: the server's).
  std::optional<std::chrono::milliseconds> latency;
  const std::string* passphrase = nullptr;
};

// `peer`: the caller's address, 4 or 16 bytes; `now_s`: the clock signed URLs are checked against.
SrtVerdict judge_srt_caller(const config::Config& config, std::string_view stream_id, std::span<const uint8_t> peer,
                            int64_t now_s);

}  // namespace sluice::server
