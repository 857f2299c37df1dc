// Sluice's typed settings: plain structs whose member defaults are the values used when a key is
// absent from the YAML file. load.hpp turns YAML into a validated Config; nothing here knows YAML.
// Every key is described for users in docs/configuration.md; keep the two in step.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "config/access.hpp"
#include "config/alerts.hpp"
#include "config/access_log.hpp"
#include "config/address.hpp"
#include "config/cluster.hpp"
#include "config/srt.hpp"
#include "config/webrtc.hpp"
#include "config/hls.hpp"
#include "config/record.hpp"
#include "config/relay.hpp"

namespace sluice::config {

// Durations are whole milliseconds; YAML spells them "500ms", "30s", "5m", "1h" or "1m30s".
using Duration = std::chrono::milliseconds;

inline constexpr uint64_t kKiB = uint64_t{1} << 10;
inline constexpr uint64_t kMiB = uint64_t{1} << 20;
inline constexpr uint64_t kGiB = uint64_t{1} << 30;

enum class AppType { Live, Vod };
std::string_view app_type_name(AppType type);  // "live" / "vod"

// A publish of a name someone already publishes (docs/live.md, "A second publisher"): the newest
// publisher replaces the current one (an encoder reconnecting after its network dropped finds its
// old, dead connection still holding the name), or is refused unless the current one has gone
// stale (sent no frame for publish_stale_after).
enum class PublishConflict { Takeover, Reject };
std::string_view publish_conflict_name(PublishConflict p);  // "takeover" / "reject"

// One application: the first path segment of rtmp://host/<app>/<stream> and of the HTTP URLs.
struct AppConfig {
  std::string name;  // Letters, digits, '.', '_', '-'; unique.
  AppType type = AppType::Live;

  // Live apps only.
  bool gop_cache = true;                     // Late joiners start at the last keyframe.
  uint32_t gop_cache_max_frames = 2000;      // A GOP longer than this is not cached (1..1000000).
  uint64_t gop_cache_max_bytes = 64 * kMiB;  // ... nor one larger than this (64KiB..1GiB).
  bool wait_for_publisher = true;            // A player of an unpublished name waits (true) or gets StreamNotFound.
  // A publisher's timestamp step larger than this, forward or back, is a jump of its clock and is
  // closed up at ingest (media/timestamp_corrector.hpp), 100ms..1h.
  Duration timestamp_jump = std::chrono::seconds(1);
  PublishConflict publish_conflict = PublishConflict::Takeover;
  // A publisher that sent no frame for this long counts as gone (reject; takeover needs no wait),
  // 500ms..1h: less than an encoder's reconnect delay, more than a frame interval.
  Duration publish_stale_after = std::chrono::seconds(3);
  SrtAppConfig srt;         // this app's SRT latency and passphrase (config/srt.hpp)
  RelayConfig relay;        // push targets, pulls, edge origins (config/relay.hpp)
  RecordConfig record;      // What is recorded, where, in what pieces, for how long (config/record.hpp).
  HlsConfig hls;            // HLS / LL-HLS of its streams (config/hls.hpp)
  StreamAlertRules alerts;  // raised and cleared on its streams' health (config/alerts.hpp)

  // Who may publish (live apps) and play (both kinds), config/access.hpp. The older keys
  // publish_allow and publish_token fill publish.allow and publish.keys.
  AccessRules publish;
  AccessRules play;
  AppLimits limits;

  // VOD apps only.
  std::string root;                    // Directory of the media files; absolute after loading; required.
  bool follow_symlinks = true;         // Symlinks below the root are followed (only to files inside it).
  uint32_t playlist_max_entries = 64;  // play(reset=false) items queued per stream (1..10000).
  uint32_t name_max_bytes = 1024;      // Longest stream name a player may ask for (16..4000).

  bool operator==(const AppConfig&) const = default;
};

// Slow-player policy, applied to every subscriber of a live stream (RTMP and HTTP-FLV players).
// "Bytes" is what is queued for the player and not yet written to its socket; "delay" is the media
// time that queue spans (newest minus oldest queued timestamp). Above either soft limit the player
// loses video inter frames until the next keyframe (audio, metadata and sequence headers are never
// dropped); above either hard limit it is disconnected with a log line that says why.
struct PlayerQueueConfig {
  uint64_t soft_bytes = 2 * kMiB;
  uint64_t hard_bytes = 16 * kMiB;
  Duration soft_delay = std::chrono::seconds(3);
  Duration hard_delay = std::chrono::seconds(15);
  // Live media to a player waits so that it goes out with what follows it: a few larger writes a
  // second instead of one per message. The wait follows the load (server/io/write_hold.hpp): each
  // worker loop aims at `write_budget` writes per second, and never holds longer than
  // `write_delay`. A budget of 0 always holds `write_delay`; a `write_delay` of 0 never holds.
  // Above `write_budget_players` sockets on a loop the budget shrinks with the square of
  // (write_budget_players / sockets), so a busy loop saves more writes per player while a light
  // one stays within a few ms; 0 keeps the budget at every load.
  Duration write_delay = std::chrono::milliseconds(100);
  uint64_t write_budget = 20000;
  uint64_t write_budget_players = 200;
  // At most this many lanes per hold: a busy loop writes its held players in slices spread over
  // the hold instead of in one pass (server/io/flush_scheduler.hpp); 1 writes them all at once.
  uint64_t write_lanes = 8;

  bool operator==(const PlayerQueueConfig&) const = default;
};

// Bounds on what one peer (authenticated or not) can make the server hold; docs/configuration.md
// ("Limits") says why each default is what it is.
struct RtmpLimitsConfig {
  // Unsent output of one connection (command replies, VOD media, bytes in the socket's queue):
  // above soft the connection stops being read until it drains; above hard, or above soft for
  // longer than output_timeout, it is closed.
  uint64_t output_soft_bytes = 1 * kMiB;
  uint64_t output_hard_bytes = 8 * kMiB;
  Duration output_timeout = std::chrono::seconds(30);
  // Message streams (createStream) one connection may hold, and so players and publishers.
  uint32_t streams_per_connection = 16;
  // Live streams (published or waited for) the whole server holds; 0 = no limit.
  uint32_t max_streams = 10000;
  // Bytes of partially received messages all connections together may hold; 0 ("auto", the
  // default): a sixteenth of the machine's memory or the cgroup's limit, at least 16 MiB
  // (server/io/machine_memory.hpp): 64 MiB on a 1 GiB VPS.
  uint64_t reassembly_budget = 0;
  // Before the handshake and connect have completed, one incoming message may be at most this big
  // (connect commands are a few hundred bytes).
  uint32_t pre_connect_message_size = 64 * kKiB;
  // New connections accepted per loop iteration: a flood of connects must not stall players.
  uint32_t accepts_per_iteration = 32;

  bool operator==(const RtmpLimitsConfig&) const = default;
};

// The PROXY protocol on one family of listeners (docs/proxy_protocol.md): when enabled, every
// connection they accept from a balancer (every peer, or those in `from`) must start with a PROXY
// header (v1 or v2) whose source address then stands for the client everywhere (logs, address
// rules, per-IP limits, hooks, the API); other peers are direct clients.
// YAML: <family>.proxy_protocol and <family>.proxy_protocol_from.
struct ProxyProtocolConfig {
  bool enabled = false;
  std::vector<Cidr> from;  // the balancers, which must send a header; empty = every peer must

  bool operator==(const ProxyProtocolConfig&) const = default;
};

struct RtmpConfig {
  std::vector<ListenAddress> listen = {{"0.0.0.0", 1935}};
  ProxyProtocolConfig proxy_protocol;
  uint32_t chunk_size = 4096;             // Our outgoing chunk size, 128..65536.
  uint32_t window_ack_size = 2500000;     // Window Acknowledgement Size and Peer Bandwidth we announce.
  uint32_t max_message_size = 16 * kMiB;  // Larger incoming messages close the connection.
  uint32_t max_connections = 10000;       // Over this, new connections are closed at once; 0 = no limit.
  Duration handshake_timeout = std::chrono::seconds(10);  // Accept to the end of "connect".
  Duration idle_timeout = std::chrono::seconds(60);       // Nothing received for this long: close. 0 = never.
  Duration ping_interval = std::chrono::seconds(20);      // Nothing received for this long: ping. 0 = never.
  PlayerQueueConfig player_queue;
  RtmpLimitsConfig limits;
  // Write the players of a flush pass with one io_uring submit instead of one writev each, when
  // the kernel allows it (otherwise a warning and writev). false: always writev.
  bool io_uring = true;

  bool operator==(const RtmpConfig&) const = default;
};

// rtmps: RTMP over TLS on its own listeners (docs/tls.md). Off until listen is given.
struct TlsCertificate {
  std::string cert;  // PEM certificate and chain; absolute after loading
  std::string key;   // PEM private key; absolute after loading
  bool operator==(const TlsCertificate&) const = default;
};

struct RtmpsConfig {
  std::vector<ListenAddress> listen;         // empty: no RTMPS
  std::vector<TlsCertificate> certificates;  // the first is the default, the others by SNI
  ProxyProtocolConfig proxy_protocol;        // the header comes before the TLS ClientHello
  // record_layer: sluice (default; over TLS 1.3 Sluice seals the records it sends) or openssl.
  bool seal_records = true;
  bool enabled() const { return !listen.empty(); }
  bool operator==(const RtmpsConfig&) const = default;
};

struct ApiConfig {
  std::vector<Cidr> allow = {Cidr::loopback_v4(), Cidr::loopback_v6()};  // Empty = anyone.
  // When set, every API and /metrics request also needs "Authorization: Bearer <token>".
  Secret token;

  bool operator==(const ApiConfig&) const = default;
};

struct HttpConfig {
  bool enabled = false;  // True when the file has an "http:" section, unless it says enabled: false.
  std::vector<ListenAddress> listen = {{"0.0.0.0", 8080}};
  ProxyProtocolConfig proxy_protocol;
  ApiConfig api;
  std::string upload_token;  // Uploads need "Authorization: Bearer <token>"; empty disables uploads.
  uint64_t upload_max_size = 4 * kGiB;
  std::vector<std::string> upload_extensions = {"flv", "mp4", "m4v", "m4a", "f4v", "mov"};  // Lower case, no dot.

  bool operator==(const HttpConfig&) const = default;
};

enum class LogLevel { Error, Warn, Info, Debug };
enum class LogFormat { Text, Json };
std::string_view log_level_name(LogLevel level);     // "error", "warn", "info", "debug"
std::string_view log_format_name(LogFormat format);  // "text", "json"

struct LogConfig {
  LogLevel level = LogLevel::Info;
  LogFormat format = LogFormat::Text;

  bool operator==(const LogConfig&) const = default;
};

// What SIGTERM/SIGINT does (docs/cluster.md, "Draining"). With a drain period the node stops
// accepting, asks RTMP clients that can reconnect to do so, and lets the other sessions run for
// up to `drain` before the usual stop; a second signal stops at once. 0 = stop at once (0..24h).
struct ShutdownConfig {
  Duration drain = Duration(0);

  bool operator==(const ShutdownConfig&) const = default;
};

// reload: how the running server takes a changed file (docs/configuration.md, "Reload"). With
// `watch` it reloads when the file changes, besides SIGHUP and POST /api/v1/config/reload.
struct ReloadConfig {
  bool watch = true;
  // After a reload, the sessions admitted under the old access rules are checked against the new
  // ones, and those the new rules refuse end. Off: a session keeps the admission it had.
  bool recheck = false;

  bool operator==(const ReloadConfig&) const = default;
};

struct Config {
  RtmpConfig rtmp;
  RtmpsConfig rtmps;
  // https: the HTTP side (HTTP-FLV, downloads, uploads, API, page) over TLS on listeners of its
  // own, with the same keys as rtmps (docs/tls.md, "HTTPS"). Needs http.enabled.
  RtmpsConfig https;
  std::vector<AppConfig> apps;  // In file order; at least one after loading.
  HttpConfig http;
  LogConfig log;
  HooksConfig hooks;
  ConnectionLimits limits;  // limits.connections is rtmp.max_connections (one setting, two spellings)
  std::string server_id;    // Sent in hooks; the host name when not set.
  ClusterConfig cluster;    // Off unless a registry is given (docs/cluster.md).
  SrtConfig srt;            // Off unless srt.listen is given (docs/srt.md).
  WebrtcConfig webrtc;      // Off unless webrtc.listen is given (docs/webrtc.md).
  uint32_t workers = 0;     // Event loops (threads); 0 ("auto" in YAML) means one per CPU core.
  ShutdownConfig shutdown;
  ReloadConfig reload;
  AccessLogConfig access_log;  // Off unless access_log.path is given (docs/access_log.md).

  // Where the values came from: the file path as given, or "<embedded default>".
  std::string source;
  // The absolute directory relative paths were resolved against.
  std::string base_dir;

  const AppConfig* find_app(std::string_view name) const;

  bool operator==(const Config&) const = default;
};

// A configuration as the loops hold it: immutable, and swapped whole by a reload
// (docs/configuration.md, "Reload"), never changed in place.
using ConfigSnapshot = std::shared_ptr<const Config>;
// One app of a snapshot that keeps the whole snapshot alive: held by whatever uses an app beyond
// the callback it was looked up in (a hook's answer, a muxer living as long as its stream).
using AppRef = std::shared_ptr<const AppConfig>;

}  // namespace sluice::config
