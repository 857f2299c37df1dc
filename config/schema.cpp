// The schema: which keys each section of the file has, the type and range of each, and which
// member of config.hpp it fills. A key that is absent keeps that member's default. Settings that
// constrain each other are checked (checks.hpp) as soon as both are read, so the errors come in
// file order.
#include "config/schema.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>

#include "config/access_log_schema.hpp"
#include "config/access_schema.hpp"
#include "config/checks.hpp"
#include "config/cluster_schema.hpp"
#include "config/alerts_schema.hpp"
#include "config/hls_schema.hpp"
#include "config/record_schema.hpp"
#include "config/relay_schema.hpp"
#include "config/srt_schema.hpp"
#include "config/webrtc_schema.hpp"
#include "config/units.hpp"

namespace sluice::config {

namespace {

// What names this node when the file does not (cluster.node_id).
std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return {};
  return buf;
}

bool token_chars_ok(std::string_view s, std::string_view extra) {
  return std::all_of(s.begin(), s.end(), [&](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
           c == '_' || c == '~' || extra.find(c) != std::string_view::npos;
  });
}

bool app_name_ok(std::string_view s) {
  if (s.empty() || s == "." || s == "..") return false;
  return token_chars_ok(s, "") && s.find('~') == std::string_view::npos;
}

void load_player_queue(FieldReader& r, const Field& self, PlayerQueueConfig& q) {
  Section s(r, self,
            {"soft_bytes", "hard_bytes", "soft_delay", "hard_delay", "write_delay", "write_budget",
             "write_budget_players", "write_lanes"});
  auto soft_bytes = s.take("soft_bytes");
  auto hard_bytes = s.take("hard_bytes");
  auto soft_delay = s.take("soft_delay");
  auto hard_delay = s.take("hard_delay");
  auto write_delay = s.take("write_delay");
  auto write_budget = s.take("write_budget");
  auto write_budget_players = s.take("write_budget_players");
  auto write_lanes = s.take("write_lanes");
  bool ok = true;
  if (soft_bytes) ok &= r.read_size(*soft_bytes, q.soft_bytes, 16 * kKiB, kGiB);
  if (hard_bytes) ok &= r.read_size(*hard_bytes, q.hard_bytes, 16 * kKiB, 4 * kGiB);
  if (soft_delay) ok &= r.read_duration(*soft_delay, q.soft_delay, Duration(100), std::chrono::minutes(10), false);
  if (hard_delay) ok &= r.read_duration(*hard_delay, q.hard_delay, Duration(100), std::chrono::hours(1), false);
  if (write_delay) ok &= r.read_duration(*write_delay, q.write_delay, Duration(0), Duration(500), true);
  if (write_budget) ok &= r.read_uint(*write_budget, q.write_budget, 0, 10'000'000);
  if (write_budget_players) ok &= r.read_uint(*write_budget_players, q.write_budget_players, 0, 10'000'000);
  if (write_lanes) ok &= r.read_uint(*write_lanes, q.write_lanes, 1, 64);
  if (ok) check_queue_limits(r, soft_bytes, hard_bytes, soft_delay, hard_delay, q);
}

void load_rtmp_limits(FieldReader& r, const Field& self, RtmpLimitsConfig& l) {
  Section s(r, self,
            {"output_soft_bytes", "output_hard_bytes", "output_timeout", "streams_per_connection", "max_streams",
             "reassembly_budget", "pre_connect_message_size", "accepts_per_iteration"});
  auto soft = s.take("output_soft_bytes");
  auto hard = s.take("output_hard_bytes");
  bool ok = true;
  if (soft) ok &= r.read_size(*soft, l.output_soft_bytes, 64 * kKiB, kGiB);
  if (hard) ok &= r.read_size(*hard, l.output_hard_bytes, 64 * kKiB, 4 * kGiB);
  if (ok && l.output_soft_bytes > l.output_hard_bytes) {
    r.error(soft ? *soft : *hard, "output_soft_bytes (" + format_size(l.output_soft_bytes) +
                                      ") must not exceed output_hard_bytes (" + format_size(l.output_hard_bytes) + ")");
  }
  if (auto f = s.take("output_timeout")) {
    r.read_duration(*f, l.output_timeout, std::chrono::seconds(1), std::chrono::hours(1), false);
  }
  if (auto f = s.take("streams_per_connection")) r.read_uint(*f, l.streams_per_connection, 1, 1024);
  if (auto f = s.take("max_streams")) r.read_uint(*f, l.max_streams, 0, 10'000'000);
  if (auto f = s.take("reassembly_budget")) {
    if (f->value.is_scalar() && f->value.scalar() == "auto") {
      l.reassembly_budget = 0;
    } else {
      r.read_size(*f, l.reassembly_budget, kMiB, 64 * kGiB);
    }
  }
  if (auto f = s.take("pre_connect_message_size")) r.read_size(*f, l.pre_connect_message_size, 4 * kKiB, 16 * kMiB);
  if (auto f = s.take("accepts_per_iteration")) r.read_uint(*f, l.accepts_per_iteration, 1, 100000);
}

// <family>.proxy_protocol and <family>.proxy_protocol_from (docs/proxy_protocol.md). A list of
// balancers without the switch would do nothing, which is surely not what was meant.
void load_proxy_protocol(FieldReader& r, const Section& s, ProxyProtocolConfig& pp) {
  if (auto f = s.take("proxy_protocol")) r.read_bool(*f, pp.enabled);
  auto from = s.take("proxy_protocol_from");
  if (from && r.read_cidrs(*from, pp.from) && !pp.from.empty() && !pp.enabled) {
    r.error(from->key.mark(), from->path,
            "only valid with proxy_protocol: true (it lists the balancers that send the header)");
  }
}

void load_rtmp(FieldReader& r, const Field& self, RtmpConfig& rtmp) {
  Section s(
      r, self,
      {"listen", "chunk_size", "window_ack_size", "max_message_size", "max_connections", "handshake_timeout",
       "idle_timeout", "ping_interval", "player_queue", "limits", "io_uring", "proxy_protocol", "proxy_protocol_from"});
  if (auto f = s.take("listen")) r.read_listen(*f, rtmp.listen);
  load_proxy_protocol(r, s, rtmp.proxy_protocol);
  if (auto f = s.take("chunk_size")) r.read_uint(*f, rtmp.chunk_size, 128, 65536);
  if (auto f = s.take("window_ack_size")) r.read_uint(*f, rtmp.window_ack_size, 4096, 0x7FFFFFFF);
  // 16MiB is the wire maximum plus one (the length field has 24 bits), i.e. "no extra limit".
  if (auto f = s.take("max_message_size")) r.read_size(*f, rtmp.max_message_size, 64 * kKiB, 16 * kMiB);
  if (auto f = s.take("max_connections")) r.read_uint(*f, rtmp.max_connections, 0, 10'000'000);
  using std::chrono::hours;
  using std::chrono::minutes;
  using std::chrono::seconds;
  if (auto f = s.take("handshake_timeout")) {
    r.read_duration(*f, rtmp.handshake_timeout, Duration(100), minutes(10), false);
  }
  auto idle = s.take("idle_timeout");
  auto ping = s.take("ping_interval");
  bool idle_ok = !idle || r.read_duration(*idle, rtmp.idle_timeout, seconds(1), hours(1000), true);
  bool ping_ok = !ping || r.read_duration(*ping, rtmp.ping_interval, seconds(1), hours(1000), true);
  if ((idle || ping) && idle_ok && ping_ok) check_ping_interval(r, idle, ping, rtmp);
  if (auto f = s.take("player_queue")) load_player_queue(r, *f, rtmp.player_queue);
  if (auto f = s.take("limits")) load_rtmp_limits(r, *f, rtmp.limits);
  if (auto f = s.take("io_uring")) r.read_bool(*f, rtmp.io_uring);
}

const std::vector<std::string_view> kLiveAppKeys = {"gop_cache",
                                                    "gop_cache_max_frames",
                                                    "gop_cache_max_bytes",
                                                    "wait_for_publisher",
                                                    "timestamp_jump",
                                                    "publish_conflict",
                                                    "publish_stale_after",
                                                    "srt",
                                                    "publish_allow",
                                                    "publish_token",
                                                    "record",
                                                    "record_path",
                                                    "publish",
                                                    "push",
                                                    "pull",
                                                    "origins",
                                                    "hls",
                                                    "alerts"};
const std::vector<std::string_view> kVodAppKeys = {"root", "follow_symlinks", "playlist_max_entries", "name_max_bytes"};

// The app's type (live, edge, vod); the keys of the other kind are errors. False when the type is
// missing or unknown (nothing else is read then).
bool load_app_type(FieldReader& r, const Field& self, Section& s, AppConfig& app) {
  auto type = s.take("type");
  if (!type) {
    r.error(self.key.mark(), child_path(self.path, "type"), "missing (live, edge or vod)");
    return false;
  }
  if (!r.scalar(*type, "live, edge or vod")) return false;
  std::string t = lower(type->value.scalar());
  // An edge is a live app whose streams come from its origins (config/relay.hpp).
  if (t == "live" || t == "edge") {
    app.type = AppType::Live;
    app.relay.edge = t == "edge";
  } else if (t == "vod") {
    app.type = AppType::Vod;
  } else {
    r.error(*type, "must be live, edge or vod (got " + in_quotes(type->value.scalar()) + ")");
    return false;
  }
  const auto& other_keys = app.type == AppType::Live ? kVodAppKeys : kLiveAppKeys;
  for (std::string_view key : other_keys) {
    if (auto f = s.take(key)) {
      r.error(f->key.mark(), f->path,
              std::string("only valid for ") + (app.type == AppType::Live ? "vod" : "live") + " apps (this app is " +
                  std::string(app_type_name(app.type)) + ")");
    }
  }
  return true;
}

void load_vod_app(FieldReader& r, const Field& self, Section& s, AppConfig& app) {
  if (auto f = s.take("root")) {
    r.read_path(*f, app.root);
  } else {
    r.error(self.key.mark(), child_path(self.path, "root"), "missing: vod apps need the directory of their files");
  }
  if (auto f = s.take("follow_symlinks")) r.read_bool(*f, app.follow_symlinks);
  if (auto f = s.take("playlist_max_entries")) r.read_uint(*f, app.playlist_max_entries, 1, 10'000);
  // The upper bound is kVodNameHardLimit (server/vod/path.hpp), which config/ cannot see.
  if (auto f = s.take("name_max_bytes")) r.read_uint(*f, app.name_max_bytes, 16, 4000);
}

// publish (the access rules), and the keys of wave 1 it replaced: publish_allow is publish.allow,
// publish_token one of publish.keys.
void load_publish_rules(FieldReader& r, Section& s, AppConfig& app) {
  auto publish = s.take("publish");
  if (publish) load_access_rules(r, *publish, app.publish);
  if (auto f = s.take("publish_allow")) {
    if (publish) {
      r.error(f->key.mark(), f->path, "give the addresses as publish.allow (publish_allow is its older spelling)");
    } else {
      r.read_cidrs(*f, app.publish.allow);
    }
  }
  if (auto f = s.take("publish_token")) {
    std::string token;
    if (publish) {
      r.error(f->key.mark(), f->path, "give the token in publish.keys (publish_token is its older spelling)");
    } else if (r.read_string(*f, token)) {
      if (!token_chars_ok(token, "")) {
        r.error(*f, "may only use letters, digits, '-', '.', '_' and '~' (it travels in the stream name as ?token=)");
      } else if (!token.empty()) {
        app.publish.keys.push_back(token);
        app.publish.key_origins.push_back("publish_token");
      }
    }
  }
}

// record as a map, or the older record: on/off with record_path.
void load_app_record(FieldReader& r, Section& s, AppConfig& app) {
  auto record = s.take("record");
  auto record_path = s.take("record_path");
  if (record && record->value.is_map()) {
    if (record_path) r.error(record_path->key.mark(), record_path->path, "give the directory as record.dir");
    load_record(r, *record, app);
  } else {
    bool on = false;
    if (record && r.read_bool(*record, on)) app.record.mode = on ? RecordMode::All : RecordMode::Off;
    if (record_path) r.read_path(*record_path, app.record.dir);
  }
  check_record_path(r, record, app);
}

// push targets, and pulls (a live app) or origins (an edge).
void load_app_relays(FieldReader& r, const Field& self, Section& s, AppConfig& app) {
  if (auto f = s.take("push")) load_push(r, *f, app.relay);
  auto pull = s.take("pull");
  auto origins = s.take("origins");
  if (app.relay.edge) {
    if (pull) r.error(pull->key.mark(), pull->path, "an edge pulls from its origins (give them as origins)");
    if (origins) {
      load_edge_origins(r, *origins, app.relay);
    } else {
      r.error(self.key.mark(), child_path(self.path, "origins"), "missing: an edge needs the URLs of its origins");
    }
  } else {
    if (origins) r.error(origins->key.mark(), origins->path, "only valid for edge apps (type: edge)");
    if (pull) load_pull(r, *pull, app.relay);
  }
}

void load_live_app(FieldReader& r, const Field& self, Section& s, AppConfig& app) {
  if (auto f = s.take("gop_cache")) r.read_bool(*f, app.gop_cache);
  if (auto f = s.take("gop_cache_max_frames")) r.read_uint(*f, app.gop_cache_max_frames, 1, 1'000'000);
  if (auto f = s.take("gop_cache_max_bytes")) r.read_size(*f, app.gop_cache_max_bytes, 64 * kKiB, kGiB);
  if (auto f = s.take("wait_for_publisher")) r.read_bool(*f, app.wait_for_publisher);
  if (auto f = s.take("timestamp_jump")) {
    r.read_duration(*f, app.timestamp_jump, Duration(100), std::chrono::hours(1), false);
  }
  if (auto f = s.take("publish_conflict")) {
    r.read_choice(*f, "takeover or reject",
                  {{"takeover", PublishConflict::Takeover}, {"reject", PublishConflict::Reject}}, app.publish_conflict);
  }
  if (auto f = s.take("publish_stale_after")) {
    r.read_duration(*f, app.publish_stale_after, Duration(500), std::chrono::hours(1), false);
  }
  load_publish_rules(r, s, app);
  if (auto f = s.take("srt")) load_app_srt(r, *f, app.srt);
  if (auto f = s.take("hls")) load_hls(r, *f, app);
  if (auto f = s.take("alerts")) load_app_alerts(r, *f, app.alerts);
  load_app_record(r, s, app);
  load_app_relays(r, self, s, app);
}

void load_app(FieldReader& r, const Field& self, AppConfig& app) {
  std::vector<std::string_view> known = {"type", "play", "limits"};
  known.insert(known.end(), kLiveAppKeys.begin(), kLiveAppKeys.end());
  known.insert(known.end(), kVodAppKeys.begin(), kVodAppKeys.end());
  Section s(r, self, known);
  if (!s.valid() || !load_app_type(r, self, s, app)) return;
  if (auto f = s.take("play")) load_access_rules(r, *f, app.play);
  if (auto f = s.take("limits")) load_app_limits(r, *f, app.limits);
  if (app.type == AppType::Vod) {
    load_vod_app(r, self, s, app);
  } else {
    load_live_app(r, self, s, app);
  }
}

void load_apps(FieldReader& r, const Field& self, std::vector<AppConfig>& apps) {
  if (!self.value.is_map()) {
    r.error(self, std::string("must be a map of app name to settings (e.g. live: { type: live }), not ") +
                      self.value.kind_name());
    return;
  }
  for (const auto& [key, value] : self.value.entries()) {
    Field f{key, value, {}};
    if (!f.key.is_scalar()) {
      r.error(f.key.mark(), self.path, "app names must be plain names");
      continue;
    }
    const std::string& name = f.key.scalar();
    f.path = child_path(self.path, name);
    if (!app_name_ok(name)) {
      r.error(f.key.mark(), f.path, "app names may only use letters, digits, '.', '_' and '-'");
      continue;
    }
    auto dup = std::find_if(apps.begin(), apps.end(), [&](const AppConfig& a) { return a.name == name; });
    if (dup != apps.end()) {
      r.error(f.key.mark(), f.path, "duplicate app name");
      continue;
    }
    AppConfig app;
    app.name = name;
    load_app(r, f, app);
    apps.push_back(std::move(app));
  }
  if (apps.empty() && self.value.size() == 0) r.error(self, "at least one app is required");
}

// rtmps: { listen, cert, key } or with certificates: [{ cert, key }, ...] (chosen by SNI).
void load_rtmps(FieldReader& r, const Field& self, RtmpsConfig& rtmps) {
  Section s(r, self,
            {"listen", "cert", "key", "certificates", "proxy_protocol", "proxy_protocol_from", "record_layer"});
  if (!s.valid()) return;
  rtmps.listen.clear();
  if (auto f = s.take("listen")) r.read_listen(*f, rtmps.listen);
  if (auto f = s.take("record_layer")) {
    r.read_choice(*f, "sluice or openssl", {{"sluice", true}, {"openssl", false}}, rtmps.seal_records);
  }
  load_proxy_protocol(r, s, rtmps.proxy_protocol);
  auto cert = s.take("cert");
  auto key = s.take("key");
  if (cert || key) {
    TlsCertificate c;
    if (!cert || !key) {
      r.error(cert ? *cert : *key, "give both cert and key");
    } else if (r.read_path(*cert, c.cert) && r.read_path(*key, c.key)) {
      rtmps.certificates.push_back(c);
    }
  }
  if (auto list = s.take("certificates")) {
    {
      for (const Field& item : r.items(*list, "a list of { cert, key }")) {
        Section one(r, item, {"cert", "key"});
        if (!one.valid()) continue;
        auto ic = one.take("cert");
        auto ik = one.take("key");
        TlsCertificate c;
        if (!ic || !ik) {
          r.error(item, "each certificate needs cert and key");
        } else if (r.read_path(*ic, c.cert) && r.read_path(*ik, c.key)) {
          rtmps.certificates.push_back(c);
        }
      }
    }
  }
  if (rtmps.enabled() && rtmps.certificates.empty()) r.error(self, self.path + " needs cert and key (PEM files)");
}

void load_http(FieldReader& r, const Field& self, HttpConfig& http) {
  Section s(r, self, {"enabled", "listen", "api", "upload", "proxy_protocol", "proxy_protocol_from"});
  if (auto f = s.take("enabled")) r.read_bool(*f, http.enabled);
  if (auto f = s.take("listen")) r.read_listen(*f, http.listen);
  load_proxy_protocol(r, s, http.proxy_protocol);
  if (auto api = s.take("api")) {
    Section a(r, *api, {"allow", "token", "token_file", "token_env"});
    if (auto f = a.take("allow")) r.read_cidrs(*f, http.api.allow);
    load_secret(r, a, *api, "token", http.api.token);
  }
  if (auto upload = s.take("upload")) {
    Section u(r, *upload, {"token", "max_size", "extensions"});
    if (auto f = u.take("token")) {
      std::string token;
      if (r.read_string(*f, token)) {
        // RFC 6750 token68: it is sent as "Authorization: Bearer <token>".
        size_t end = token.find_last_not_of('=');
        std::string_view body = std::string_view(token).substr(0, end == std::string::npos ? 0 : end + 1);
        if (!token.empty() && (body.empty() || !token_chars_ok(body, "+/"))) {
          r.error(*f, "may only use letters, digits, '-', '.', '_', '~', '+', '/' and trailing '=' (a bearer token)");
        } else {
          http.upload_token = token;
        }
      }
    }
    if (auto f = u.take("max_size")) r.read_size(*f, http.upload_max_size, 1, 16 * (kGiB << 10));
    if (auto f = u.take("extensions")) {
      std::vector<std::string> list;
      if (r.read_string_list(*f, list)) {
        bool ok = true;
        for (std::string& ext : list) {
          if (!ext.empty() && ext.front() == '.') ext.erase(0, 1);
          ext = lower(ext);
          if (ext.empty() || !std::all_of(ext.begin(), ext.end(),
                                          [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); })) {
            r.error(*f, "extensions are letters and digits, like mp4 (got " + in_quotes(ext) + ")");
            ok = false;
          }
        }
        if (ok) {
          http.upload_extensions.clear();
          for (std::string& ext : list) {  // Drop repeats, keep the order given.
            auto& out = http.upload_extensions;
            if (std::find(out.begin(), out.end(), ext) == out.end()) out.push_back(std::move(ext));
          }
        }
      }
    }
  }
}

void load_shutdown(FieldReader& r, const Field& self, ShutdownConfig& shutdown) {
  Section s(r, self, {"drain"});
  if (auto f = s.take("drain")) r.read_duration(*f, shutdown.drain, Duration(100), std::chrono::hours(24), true);
}

void load_reload(FieldReader& r, const Field& self, ReloadConfig& reload) {
  Section s(r, self, {"watch", "recheck"});
  if (auto f = s.take("watch")) r.read_bool(*f, reload.watch);
  if (auto f = s.take("recheck")) r.read_bool(*f, reload.recheck);
}

void load_log(FieldReader& r, const Field& self, LogConfig& log) {
  Section s(r, self, {"level", "format"});
  if (auto f = s.take("level")) {
    r.read_choice(*f, "error, warn, info or debug",
                  {{"error", LogLevel::Error},
                   {"warn", LogLevel::Warn},
                   {"warning", LogLevel::Warn},
                   {"info", LogLevel::Info},
                   {"debug", LogLevel::Debug}},
                  log.level);
  }
  if (auto f = s.take("format")) {
    r.read_choice(*f, "text or json", {{"text", LogFormat::Text}, {"json", LogFormat::Json}}, log.format);
  }
}

}  // namespace

Config read_config(FieldReader& r, const YamlNode& root) {
  Config cfg;
  Field top_field{YamlNode(), root, ""};
  if (!root.is_null() && !root.is_map()) {
    r.error(root.mark(), "",
            std::string("the file must be a map of sections (rtmp, apps, http, log), not ") + root.kind_name());
    return cfg;
  }
  Section top(r, top_field,
              {"workers", "rtmp", "rtmps", "https", "srt", "webrtc", "apps", "http", "log", "hooks", "limits",
               "server_id", "cluster", "shutdown", "access_log", "reload"});
  if (auto f = top.take("workers")) {
    if (f->value.is_scalar() && lower(f->value.scalar()) == "auto") {
      cfg.workers = 0;
    } else if (r.scalar(*f, "an integer or auto")) {
      if (f->value.scalar().find_first_not_of("0123456789") != std::string::npos) {
        r.error(*f, "must be an integer or auto (got " + in_quotes(f->value.scalar()) + ")");
      } else {
        r.read_uint(*f, cfg.workers, 1, 1024);
      }
    }
  }
  if (auto f = top.take("rtmp")) load_rtmp(r, *f, cfg.rtmp);
  if (auto f = top.take("rtmps")) load_rtmps(r, *f, cfg.rtmps);
  if (auto f = top.take("https")) load_rtmps(r, *f, cfg.https);  // the same keys
  if (auto f = top.take("srt")) load_srt(r, *f, cfg.srt);
  if (auto f = top.take("webrtc")) load_webrtc(r, *f, cfg.webrtc);
  if (auto f = top.take("apps")) {
    load_apps(r, *f, cfg.apps);
  } else {
    r.error(YamlMark{}, "apps", "missing: at least one app is required (e.g. live: { type: live })");
  }
  if (auto f = top.take("http")) {
    cfg.http.enabled = true;  // Writing an http section means wanting HTTP, unless it says otherwise.
    load_http(r, *f, cfg.http);
  }
  if (cfg.https.enabled() && !cfg.http.enabled) {
    r.error(YamlMark{}, "https", "needs the HTTP side: add an http section (http: { listen: ... })");
  }
  if (auto f = top.take("log")) load_log(r, *f, cfg.log);
  if (auto f = top.take("shutdown")) load_shutdown(r, *f, cfg.shutdown);
  if (auto f = top.take("reload")) load_reload(r, *f, cfg.reload);
  if (auto f = top.take("access_log")) load_access_log(r, *f, cfg.access_log);
  if (auto f = top.take("hooks")) load_hooks(r, *f, cfg.hooks);
  if (auto f = top.take("limits")) {
    auto rtmp = top.take("rtmp");
    auto has_key = [](const Field& m, std::string_view key) {
      if (!m.value.is_map()) return false;
      for (const auto& [k, v] : m.value.entries())
        if (k.is_scalar() && k.scalar() == key) return true;
      return false;
    };
    if (rtmp && has_key(*rtmp, "max_connections") && has_key(*f, "connections")) {
      r.error(f->key.mark(), f->path, "give limits.connections or rtmp.max_connections, not both (one setting)");
    } else {
      load_connection_limits(r, *f, cfg);
    }
  }
  if (auto f = top.take("server_id")) r.read_string(*f, cfg.server_id);
  if (auto f = top.take("cluster"))
    load_cluster(r, *f, cfg.cluster, cfg.server_id.empty() ? host_name() : cfg.server_id);
  check_listeners(r, cfg);
  return cfg;
}

}  // namespace sluice::config
