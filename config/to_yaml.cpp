// Config -> YAML, for printing the effective configuration at start-up. Every key is written, so
// the output documents what the server actually runs with; load_string reads it back.
#include <yaml-cpp/yaml.h>

#include "config/access_log_schema.hpp"
#include "config/cluster_schema.hpp"
#include "config/hls_schema.hpp"
#include "config/load.hpp"
#include "config/units.hpp"

namespace sluice::config {

namespace {

constexpr const char* kRedacted = "<redacted>";

void emit_listen(YAML::Emitter& out, const std::vector<ListenAddress>& listen) {
  out << YAML::Key << "listen" << YAML::Value << YAML::BeginSeq;
  for (const auto& a : listen) out << a.to_string();
  out << YAML::EndSeq;
}

void emit_cidrs(YAML::Emitter& out, const char* key, const std::vector<Cidr>& list) {
  out << YAML::Key << key << YAML::Value << YAML::Flow << YAML::BeginSeq;
  for (const auto& c : list) out << c.to_string();
  out << YAML::EndSeq;
}

std::string secret(const std::string& value, Secrets secrets) {
  return value.empty() || secrets == Secrets::Show ? value : std::string(kRedacted);
}

// A secret with Show is printed inline (load_string reads it back); else only where it came from.
void emit_secret(YAML::Emitter& out, const char* key, const Secret& value, Secrets secrets) {
  if (value.value.empty()) return;
  out << YAML::Key << key << YAML::Value
      << (secrets == Secrets::Show ? value.value : std::string(kRedacted) + " (" + value.origin + ")");
}

void emit_cluster(YAML::Emitter& out, const ClusterConfig& c, Secrets secrets) {
  if (!c.enabled()) return;
  out << YAML::Key << "cluster" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "registry" << YAML::Value << c.registry->display();
  out << YAML::Key << "node_id" << YAML::Value << c.node_id;
  out << YAML::Key << "advertise" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "rtmp" << YAML::Value << c.advertise_rtmp;
  if (!c.advertise_http.empty()) out << YAML::Key << "http" << YAML::Value << c.advertise_http;
  out << YAML::EndMap;
  emit_secret(out, "password", c.password, secrets);
  emit_secret(out, "token", c.token, secrets);
  out << YAML::Key << "lease" << YAML::Value << format_duration(c.lease);
  out << YAML::Key << "duplicate_publish" << YAML::Value << duplicate_publish_name(c.duplicate_publish);
  out << YAML::EndMap;
}

void emit_srt(YAML::Emitter& out, const SrtConfig& c, Secrets secrets) {
  if (!c.enabled()) return;
  out << YAML::Key << "srt" << YAML::Value << YAML::BeginMap;
  emit_listen(out, c.listen);
  out << YAML::Key << "latency" << YAML::Value << format_duration(c.latency);
  emit_secret(out, "passphrase", c.passphrase, secrets);
  out << YAML::Key << "pbkeylen" << YAML::Value << c.pbkeylen;
  out << YAML::Key << "max_bandwidth" << YAML::Value << c.max_bandwidth;
  out << YAML::Key << "payload_size" << YAML::Value << c.payload_size;
  out << YAML::Key << "peer_idle_timeout" << YAML::Value << format_duration(c.peer_idle_timeout);
  out << YAML::EndMap;
}

void emit_webrtc(YAML::Emitter& out, const WebrtcConfig& c) {
  if (!c.enabled()) return;
  out << YAML::Key << "webrtc" << YAML::Value << YAML::BeginMap;
  emit_listen(out, c.listen);
  if (!c.advertise.empty()) {
    out << YAML::Key << "advertise" << YAML::Value << YAML::Flow << YAML::BeginSeq;
    for (const auto& a : c.advertise) out << a;
    out << YAML::EndSeq;
  }
  out << YAML::Key << "session_timeout" << YAML::Value << format_duration(c.session_timeout);
  out << YAML::Key << "max_sessions" << YAML::Value << c.max_sessions;
  out << YAML::Key << "publish_bitrate" << YAML::Value << c.publish_bitrate;
  out << YAML::EndMap;
}

void emit_app_srt(YAML::Emitter& out, const SrtAppConfig& c, Secrets secrets) {
  if (!c.latency && c.passphrase.value.empty()) return;
  out << YAML::Key << "srt" << YAML::Value << YAML::BeginMap;
  if (c.latency) out << YAML::Key << "latency" << YAML::Value << format_duration(*c.latency);
  emit_secret(out, "passphrase", c.passphrase, secrets);
  out << YAML::EndMap;
}

void emit_alerts(YAML::Emitter& out, const StreamAlertRules& a) {
  if (!a.any()) return;
  out << YAML::Key << "alerts" << YAML::Value << YAML::BeginMap;
  if (a.no_media) out << YAML::Key << "no_media" << YAML::Value << format_duration(*a.no_media);
  if (a.keyframe_interval)
    out << YAML::Key << "keyframe_interval" << YAML::Value << format_duration(*a.keyframe_interval);
  if (a.fps_below) {
    out << YAML::Key << "fps_below" << YAML::Value << *a.fps_below;
    out << YAML::Key << "fps_for" << YAML::Value << format_duration(a.fps_for);
  }
  if (a.bitrate_below_kbps) {
    out << YAML::Key << "bitrate_below_kbps" << YAML::Value << *a.bitrate_below_kbps;
    out << YAML::Key << "bitrate_for" << YAML::Value << format_duration(a.bitrate_for);
  }
  out << YAML::EndMap;
}

void emit_access(YAML::Emitter& out, const char* key, const AccessRules& a, Secrets secrets) {
  out << YAML::Key << key << YAML::Value << YAML::BeginMap;
  emit_cidrs(out, "allow", a.allow);
  emit_cidrs(out, "deny", a.deny);
  if (!a.keys.empty()) {
    out << YAML::Key << "keys" << YAML::Value << YAML::Flow << YAML::BeginSeq;
    if (secrets == Secrets::Show) {
      for (const auto& k : a.keys) out << k;
    } else {
      for (const auto& o : a.key_origins) out << std::string(kRedacted) + " (" + o + ")";
    }
    out << YAML::EndSeq;
  }
  if (!a.stream_keys.empty()) {
    out << YAML::Key << "stream_keys" << YAML::Value << YAML::BeginMap;
    for (const auto& [name, k] : a.stream_keys) out << YAML::Key << name << YAML::Value << secret(k, secrets);
    out << YAML::EndMap;
  }
  if (a.signed_url.enabled()) {
    out << YAML::Key << "signed" << YAML::Value << YAML::BeginMap;
    emit_secret(out, "secret", a.signed_url.secret, secrets);
    out << YAML::Key << "skew" << YAML::Value << format_duration(a.signed_url.skew);
    out << YAML::EndMap;
  }
  out << YAML::EndMap;
}

void emit_app_limits(YAML::Emitter& out, const AppLimits& l) {
  out << YAML::Key << "limits" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "publishers" << YAML::Value << l.publishers;
  out << YAML::Key << "players" << YAML::Value << l.players;
  out << YAML::Key << "players_per_stream" << YAML::Value << l.players_per_stream;
  out << YAML::EndMap;
}

void emit_hooks(YAML::Emitter& out, const HooksConfig& h) {
  out << YAML::Key << "hooks" << YAML::Value << YAML::BeginMap;
  for (auto [key, url] : {std::pair{"on_connect", &h.on_connect}, std::pair{"on_publish", &h.on_publish},
                          std::pair{"on_play", &h.on_play}, std::pair{"on_publish_done", &h.on_publish_done},
                          std::pair{"on_play_done", &h.on_play_done}, std::pair{"on_record_done", &h.on_record_done},
                          std::pair{"on_stream_alert", &h.on_stream_alert}}) {
    if (!url->empty()) out << YAML::Key << key << YAML::Value << *url;
  }
  out << YAML::Key << "timeout" << YAML::Value << format_duration(h.timeout);
  out << YAML::Key << "fail" << YAML::Value << (h.fail_open ? "open" : "closed");
  out << YAML::Key << "done_attempts" << YAML::Value << h.done_attempts;
  out << YAML::Key << "retry_delay" << YAML::Value << format_duration(h.retry_delay);
  out << YAML::EndMap;
}

void emit_proxy_protocol(YAML::Emitter& out, const ProxyProtocolConfig& pp) {
  out << YAML::Key << "proxy_protocol" << YAML::Value << pp.enabled;
  if (!pp.from.empty()) emit_cidrs(out, "proxy_protocol_from", pp.from);
}

void emit_rtmp(YAML::Emitter& out, const RtmpConfig& rtmp) {
  out << YAML::Key << "rtmp" << YAML::Value << YAML::BeginMap;
  emit_listen(out, rtmp.listen);
  emit_proxy_protocol(out, rtmp.proxy_protocol);
  out << YAML::Key << "chunk_size" << YAML::Value << rtmp.chunk_size;
  out << YAML::Key << "window_ack_size" << YAML::Value << rtmp.window_ack_size;
  out << YAML::Key << "max_message_size" << YAML::Value << format_size(rtmp.max_message_size);
  out << YAML::Key << "max_connections" << YAML::Value << rtmp.max_connections;
  out << YAML::Key << "handshake_timeout" << YAML::Value << format_duration(rtmp.handshake_timeout);
  out << YAML::Key << "idle_timeout" << YAML::Value << format_duration(rtmp.idle_timeout);
  out << YAML::Key << "ping_interval" << YAML::Value << format_duration(rtmp.ping_interval);
  const PlayerQueueConfig& q = rtmp.player_queue;
  out << YAML::Key << "player_queue" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "soft_bytes" << YAML::Value << format_size(q.soft_bytes);
  out << YAML::Key << "hard_bytes" << YAML::Value << format_size(q.hard_bytes);
  out << YAML::Key << "soft_delay" << YAML::Value << format_duration(q.soft_delay);
  out << YAML::Key << "hard_delay" << YAML::Value << format_duration(q.hard_delay);
  out << YAML::Key << "write_delay" << YAML::Value << format_duration(q.write_delay);
  out << YAML::Key << "write_budget" << YAML::Value << q.write_budget;
  out << YAML::Key << "write_budget_players" << YAML::Value << q.write_budget_players;
  out << YAML::Key << "write_lanes" << YAML::Value << q.write_lanes;
  out << YAML::EndMap;
  const RtmpLimitsConfig& l = rtmp.limits;
  out << YAML::Key << "limits" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "output_soft_bytes" << YAML::Value << format_size(l.output_soft_bytes);
  out << YAML::Key << "output_hard_bytes" << YAML::Value << format_size(l.output_hard_bytes);
  out << YAML::Key << "output_timeout" << YAML::Value << format_duration(l.output_timeout);
  out << YAML::Key << "streams_per_connection" << YAML::Value << l.streams_per_connection;
  out << YAML::Key << "max_streams" << YAML::Value << l.max_streams;
  out << YAML::Key << "reassembly_budget" << YAML::Value
      << (l.reassembly_budget == 0 ? std::string("auto") : format_size(l.reassembly_budget));
  out << YAML::Key << "pre_connect_message_size" << YAML::Value << format_size(l.pre_connect_message_size);
  out << YAML::Key << "accepts_per_iteration" << YAML::Value << l.accepts_per_iteration;
  out << YAML::EndMap;
  out << YAML::Key << "io_uring" << YAML::Value << rtmp.io_uring;
  out << YAML::EndMap;
}

void emit_relay(YAML::Emitter& out, const RelayConfig& relay, Secrets secrets) {
  if (!relay.push.empty()) {
    out << YAML::Key << "push" << YAML::Value << YAML::BeginSeq;
    for (const PushTargetConfig& t : relay.push) {
      out << YAML::BeginMap << YAML::Key << "url" << YAML::Value << t.url;
      if (!t.key.value.empty()) emit_secret(out, "key", t.key, secrets);
      if (!t.streams.empty()) out << YAML::Key << "streams" << YAML::Value << YAML::Flow << t.streams;
      out << YAML::Key << "verify" << YAML::Value << t.verify << YAML::EndMap;
    }
    out << YAML::EndSeq;
  }
  if (relay.edge) {
    out << YAML::Key << "origins" << YAML::Value << YAML::Flow << relay.pull.upstreams;
  } else if (relay.pull.enabled()) {
    const PullConfig& p = relay.pull;
    out << YAML::Key << "pull" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "upstreams" << YAML::Value << YAML::Flow << p.upstreams;
    out << YAML::Key << "on_demand" << YAML::Value << p.on_demand;
    out << YAML::Key << "idle" << YAML::Value << format_duration(p.idle);
    if (!p.streams.empty()) out << YAML::Key << "streams" << YAML::Value << YAML::Flow << p.streams;
    out << YAML::Key << "verify" << YAML::Value << p.verify;
    out << YAML::EndMap;
  }
}

void emit_app(YAML::Emitter& out, const AppConfig& app, Secrets secrets) {
  out << YAML::Key << app.name << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "type" << YAML::Value
      << (app.relay.edge ? std::string("edge") : std::string(app_type_name(app.type)));
  emit_access(out, "play", app.play, secrets);
  emit_app_limits(out, app.limits);
  if (app.type == AppType::Vod) {
    out << YAML::Key << "root" << YAML::Value << app.root;
    out << YAML::Key << "follow_symlinks" << YAML::Value << app.follow_symlinks;
    out << YAML::Key << "playlist_max_entries" << YAML::Value << app.playlist_max_entries;
    out << YAML::Key << "name_max_bytes" << YAML::Value << app.name_max_bytes;
  } else {
    out << YAML::Key << "gop_cache" << YAML::Value << app.gop_cache;
    out << YAML::Key << "gop_cache_max_frames" << YAML::Value << app.gop_cache_max_frames;
    out << YAML::Key << "gop_cache_max_bytes" << YAML::Value << format_size(app.gop_cache_max_bytes);
    out << YAML::Key << "wait_for_publisher" << YAML::Value << app.wait_for_publisher;
    out << YAML::Key << "timestamp_jump" << YAML::Value << format_duration(app.timestamp_jump);
    out << YAML::Key << "publish_conflict" << YAML::Value << std::string(publish_conflict_name(app.publish_conflict));
    out << YAML::Key << "publish_stale_after" << YAML::Value << format_duration(app.publish_stale_after);
    emit_app_srt(out, app.srt, secrets);
    emit_alerts(out, app.alerts);
    emit_access(out, "publish", app.publish, secrets);
    emit_relay(out, app.relay, secrets);
    const RecordConfig& rec = app.record;
    out << YAML::Key << "record" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "mode" << YAML::Value
        << (rec.mode == RecordMode::All      ? "all"
            : rec.mode == RecordMode::Manual ? "manual"
                                             : "off");
    // An empty path is "not set", which the loader spells by leaving the key out.
    if (!rec.dir.empty()) out << YAML::Key << "dir" << YAML::Value << rec.dir;
    out << YAML::Key << "path" << YAML::Value << rec.path;
    out << YAML::Key << "segment" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "duration" << YAML::Value << format_duration(rec.segment_duration);
    out << YAML::Key << "size" << YAML::Value << (rec.segment_bytes ? format_size(rec.segment_bytes) : "0");
    out << YAML::EndMap;
    out << YAML::Key << "keep" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "age" << YAML::Value << format_duration(rec.keep_age);
    out << YAML::Key << "size" << YAML::Value << (rec.keep_bytes ? format_size(rec.keep_bytes) : "0");
    out << YAML::EndMap;
    out << YAML::Key << "mp4" << YAML::Value << rec.mp4;
    out << YAML::EndMap;
    emit_hls(out, app.hls);
  }
  out << YAML::EndMap;
}

void emit_http(YAML::Emitter& out, const HttpConfig& http, Secrets secrets) {
  out << YAML::Key << "http" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "enabled" << YAML::Value << http.enabled;
  emit_listen(out, http.listen);
  emit_proxy_protocol(out, http.proxy_protocol);
  out << YAML::Key << "api" << YAML::Value << YAML::BeginMap;
  emit_cidrs(out, "allow", http.api.allow);
  emit_secret(out, "token", http.api.token, secrets);
  out << YAML::EndMap;
  out << YAML::Key << "upload" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "token" << YAML::Value << secret(http.upload_token, secrets);
  out << YAML::Key << "max_size" << YAML::Value << format_size(http.upload_max_size);
  out << YAML::Key << "extensions" << YAML::Value << YAML::Flow << YAML::BeginSeq;
  for (const auto& ext : http.upload_extensions) out << ext;
  out << YAML::EndSeq;
  out << YAML::EndMap;
  out << YAML::EndMap;
}

}  // namespace

std::string to_yaml(const Config& config, Secrets secrets) {
  YAML::Emitter out;
  out << YAML::Comment("Effective configuration, from " + (config.source.empty() ? "<none>" : config.source));
  out << YAML::Newline;
  out << YAML::BeginMap;
  if (config.workers == 0) {
    out << YAML::Key << "workers" << YAML::Value << "auto";
  } else {
    out << YAML::Key << "workers" << YAML::Value << config.workers;
  }
  emit_rtmp(out, config.rtmp);
  for (const auto& [name, tls] : {std::pair<const char*, const RtmpsConfig*>{"rtmps", &config.rtmps},
                                  std::pair<const char*, const RtmpsConfig*>{"https", &config.https}}) {
    if (!tls->enabled()) continue;
    out << YAML::Key << name << YAML::Value << YAML::BeginMap;
    emit_listen(out, tls->listen);
    emit_proxy_protocol(out, tls->proxy_protocol);
    out << YAML::Key << "record_layer" << YAML::Value << (tls->seal_records ? "sluice" : "openssl");
    out << YAML::Key << "certificates" << YAML::Value << YAML::BeginSeq;
    for (const TlsCertificate& c : tls->certificates) {
      out << YAML::BeginMap << YAML::Key << "cert" << YAML::Value << c.cert << YAML::Key << "key" << YAML::Value
          << c.key << YAML::EndMap;
    }
    out << YAML::EndSeq << YAML::EndMap;
  }
  out << YAML::Key << "apps" << YAML::Value << YAML::BeginMap;
  for (const AppConfig& app : config.apps) emit_app(out, app, secrets);
  out << YAML::EndMap;
  emit_http(out, config.http, secrets);
  emit_hooks(out, config.hooks);
  out << YAML::Key << "limits" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "per_ip" << YAML::Value << config.limits.per_ip;
  out << YAML::EndMap;
  if (!config.server_id.empty()) out << YAML::Key << "server_id" << YAML::Value << config.server_id;
  emit_cluster(out, config.cluster, secrets);
  emit_srt(out, config.srt, secrets);
  emit_webrtc(out, config.webrtc);
  emit_access_log(out, config.access_log);
  out << YAML::Key << "shutdown" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "drain" << YAML::Value << format_duration(config.shutdown.drain);
  out << YAML::EndMap;
  out << YAML::Key << "reload" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "watch" << YAML::Value << config.reload.watch;
  out << YAML::Key << "recheck" << YAML::Value << config.reload.recheck;
  out << YAML::EndMap;
  out << YAML::Key << "log" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "level" << YAML::Value << std::string(log_level_name(config.log.level));
  out << YAML::Key << "format" << YAML::Value << std::string(log_format_name(config.log.format));
  out << YAML::EndMap;
  out << YAML::EndMap;
  std::string text = out.c_str();
  text += "\n";
  return text;
}

}  // namespace sluice::config
