// Guard counters: how often a bound refused or ended something (a limit hit, a bad name, a
// connection closed for its backlog). Process-wide, one relaxed atomic each, so every worker loop
// counts into the same series; /metrics exports every entry of the table as
// sluice_guard_events_total{event="<name>"}. docs/configuration.md lists the limits behind them.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace sluice::server {

// One entry per bound. Add the enum value and its row in kGuardEvents (same order).
enum class GuardEvent : size_t {
  RtmpOutputPaused,          // reading paused: a connection's unsent output passed the soft bound
  RtmpOutputOverflow,        // closed: unsent output passed the hard bound or stayed above it too long
  RtmpUnknownStreamId,       // a stream command on a message stream id createStream never returned
  RtmpStreamsPerConnection,  // createStream refused: the connection holds its maximum of streams
  StreamsTotal,              // play/publish refused: the server holds its maximum of streams
  BadStreamName,             // play/publish refused: the name is not a valid stream name
  ReassemblyBudget,          // closed: partial messages passed the server-wide budget
  PartialMessageBound,       // closed: partial messages passed the connection's role's bound
  AcceptRefused,             // accept failed (file descriptors exhausted, ...)
  HandshakeDeferred,         // a handshake read waited for a later loop iteration (the per-iteration bound)
  TimestampJump,             // a publisher's clock jumped (apps.<live>.timestamp_jump): closed up at ingest
  VodPlaylistFull,           // play(reset=false) refused: the VOD playlist holds playlist_max_entries
  VodNameTooLong,            // VOD play/getStreamLength refused: the name is longer than name_max_bytes
  VodOutsideRoot,            // a VOD open refused: the path leads out of the root (or via a refused symlink)
  UploadBadName,             // upload refused for its name (control characters, overlong, ...)
  AccessAddress,             // publish/play refused by apps.<app>.publish|play allow/deny
  AccessKey,                 // publish/play refused: key missing or wrong
  AccessSignature,           // publish/play refused: signed URL missing, malformed, expired or wrong
  HookDenied,                // a decision hook answered 4xx (or its failure denied, with hooks.fail closed)
  HookFailed,                // a decision hook gave no usable answer (timeout, refused, 5xx)
  AppPublishers,             // publish refused at apps.<app>.limits.publishers
  AppPlayers,                // play refused at apps.<app>.limits.players or players_per_stream
  PerIpLimit,                // connection refused at limits.per_ip
  ConnectionLimit,           // connection refused at limits.connections (rtmp.max_connections)
  SessionLifetime,           // a session closed at the lifetime its hook gave
  HttpBadRequest,            // HTTP request refused before routing: malformed, bad version, Expect (400, 505, 417)
  HttpHeaderTooLarge,        // HTTP request head over 16 KiB or 100 fields (431)
  HttpUrlTooLong,            // HTTP request target too long (414)
  HttpBodyTooLarge,          // HTTP request body over its limit (413)
  HttpTimeout,               // HTTP request head or body not complete in time (408)
  PublishTakeover,           // a publisher replaced by a new one of the same name (publish_conflict: takeover)
  PublishStaleReplaced,      // a quiet publisher replaced by a new one (publish_conflict: reject, publish_stale_after)
  PublishConflictRefused,    // publish refused: the name is published (publish_conflict: reject, not stale)
  SrtRejected,               // an SRT caller refused in its handshake (stream id, app, key, limits)
  SrtBadInput,               // an SRT publisher closed for input that is no MPEG-TS (or past its bounds)
  Count
};

struct GuardEventInfo {
  std::string_view name;
  std::string_view help;
};

inline constexpr std::array<GuardEventInfo, static_cast<size_t>(GuardEvent::Count)> kGuardEvents{{
    {"rtmp_output_paused", "reading paused while unsent output was above rtmp.limits.output_soft_bytes"},
    {"rtmp_output_overflow", "connections closed for unsent output above the hard bound or the time limit"},
    {"rtmp_unknown_stream_id", "stream commands on message stream ids the server never handed out"},
    {"rtmp_streams_per_connection", "createStream refused at rtmp.limits.streams_per_connection"},
    {"streams_total", "play/publish refused at rtmp.limits.max_streams"},
    {"bad_stream_name", "play/publish refused for an invalid stream name"},
    {"reassembly_budget", "connections closed when partial messages passed the server-wide budget"},
    {"partial_message_bound",
     "connections closed for partial messages over their role's bound (a player, a publisher)"},
    {"accept_refused", "connections the listener could not accept (file descriptors exhausted, ...)"},
    {"handshake_deferred",
     "handshake reads (RTMP, TLS) put off to a later loop iteration: more than accepts_per_iteration at once"},
    {"timestamp_jump", "publisher timestamp jumps beyond apps.<live>.timestamp_jump, closed up at ingest"},
    {"vod_playlist_full", "VOD play(reset=false) refused at apps.<vod>.playlist_max_entries"},
    {"vod_name_too_long", "VOD names refused for being longer than apps.<vod>.name_max_bytes"},
    {"vod_outside_root", "VOD opens (RTMP and HTTP) refused for leading out of the root or through a refused symlink"},
    {"upload_bad_name", "uploads refused for an invalid, overlong or control-character name"},
    {"access_address", "publish/play refused by an app's allow/deny address rules"},
    {"access_key", "publish/play refused for a missing or wrong key"},
    {"access_signature", "publish/play refused for a missing, malformed, expired or wrong signed URL"},
    {"hook_denied", "sessions a decision hook refused (or whose failed hook refused, hooks.fail: closed)"},
    {"hook_failed", "decision hooks that gave no usable answer (timeout, unreachable, 5xx)"},
    {"app_publishers", "publish refused at apps.<app>.limits.publishers"},
    {"app_players", "play refused at apps.<app>.limits.players or players_per_stream"},
    {"per_ip_limit", "connections refused at limits.per_ip"},
    {"connection_limit", "connections refused at limits.connections (rtmp.max_connections)"},
    {"session_lifetime", "sessions closed at the lifetime their hook gave"},
    {"http_bad_request", "HTTP requests refused as malformed (400), of an unsupported version (505) or Expect (417)"},
    {"http_header_too_large", "HTTP requests refused for a head over 16 KiB or 100 fields (431)"},
    {"http_url_too_long", "HTTP requests refused for a target over the limit (414)"},
    {"http_body_too_large", "HTTP request bodies refused for their size (413)"},
    {"http_timeout", "HTTP requests whose head or body did not arrive in time (408)"},
    {"publish_takeover", "publishers replaced by a new publisher of the same name (publish_conflict: takeover)"},
    {"publish_stale_replaced",
     "quiet publishers replaced by a new one (publish_conflict: reject, publish_stale_after)"},
    {"publish_conflict_refused", "publishes refused because the name is published (and not stale, with reject)"},
    {"srt_rejected", "SRT callers refused in the handshake (bad stream id, no such app, key or address rules, limits)"},
    {"srt_bad_input", "SRT publishers closed for input that is no MPEG-TS or passes the demuxer's bounds"},
}};

class GuardCounters {
 public:
  static void bump(GuardEvent e) { slots()[static_cast<size_t>(e)].fetch_add(1, std::memory_order_relaxed); }
  static uint64_t get(GuardEvent e) { return slots()[static_cast<size_t>(e)].load(std::memory_order_relaxed); }

 private:
  static std::array<std::atomic<uint64_t>, static_cast<size_t>(GuardEvent::Count)>& slots() {
    static std::array<std::atomic<uint64_t>, static_cast<size_t>(GuardEvent::Count)> s{};
    return s;
  }
};

// At most one log line per interval for a flood (accept failures, refusals): true when this
// event may log now; `suppressed` is how many were not logged since the last line.
class LogRateLimit {
 public:
  explicit LogRateLimit(uint64_t interval_ms = 1000) : interval_ms_(interval_ms) {}
  bool allow(uint64_t now_ms, uint64_t& suppressed) {
    if (logged_once_ && now_ms - last_ms_ < interval_ms_) {
      ++suppressed_;
      return false;
    }
    logged_once_ = true;
    last_ms_ = now_ms;
    suppressed = suppressed_;
    suppressed_ = 0;
    return true;
  }

 private:
  uint64_t interval_ms_;
  uint64_t last_ms_ = 0;
  uint64_t suppressed_ = 0;
  bool logged_once_ = false;
};

}  // namespace sluice::server
