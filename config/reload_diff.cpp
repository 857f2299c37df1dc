#include "config/reload_diff.hpp"

#include <string_view>

namespace sluice::config {

namespace {

std::string listen_text(const std::vector<ListenAddress>& list) {
  std::string s = "[";
  for (const ListenAddress& a : list) s += (s.size() > 1 ? ", " : "") + a.host + ":" + std::to_string(a.port);
  return s + "]";
}

// The parts of an app that differ, by their YAML names: "publish, hls".
std::string app_parts(const AppConfig& a, const AppConfig& b) {
  std::string parts;
  auto part = [&](bool differs, std::string_view name) {
    if (differs) parts += (parts.empty() ? "" : ", ") + std::string(name);
  };
  part(a.type != b.type, "type");
  part(a.gop_cache != b.gop_cache || a.gop_cache_max_frames != b.gop_cache_max_frames ||
           a.gop_cache_max_bytes != b.gop_cache_max_bytes,
       "gop_cache");
  part(a.wait_for_publisher != b.wait_for_publisher, "wait_for_publisher");
  part(a.timestamp_jump != b.timestamp_jump, "timestamp_jump");
  part(a.publish_conflict != b.publish_conflict || a.publish_stale_after != b.publish_stale_after, "publish_conflict");
  part(a.srt != b.srt, "srt");
  part(a.relay.push != b.relay.push, "push");
  part(a.relay.pull != b.relay.pull || a.relay.edge != b.relay.edge, "pull");
  part(a.record != b.record, "record");
  part(a.hls != b.hls, "hls");
  part(a.alerts != b.alerts, "alerts");
  part(a.publish != b.publish, "publish");
  part(a.play != b.play, "play");
  part(a.limits != b.limits, "limits");
  part(a.root != b.root || a.follow_symlinks != b.follow_symlinks || a.playlist_max_entries != b.playlist_max_entries ||
           a.name_max_bytes != b.name_max_bytes,
       "vod");
  return parts;
}

void diff_apps(const Config& now, const Config& next, ReloadDiff& d) {
  for (const AppConfig& a : now.apps) {
    const AppConfig* b = next.find_app(a.name);
    if (b == nullptr) {
      d.changes.push_back("apps." + a.name + ": removed");
    } else if (!(a == *b)) {
      d.changes.push_back("apps." + a.name + ": changed (" + app_parts(a, *b) + ")");
    }
  }
  for (const AppConfig& b : next.apps) {
    if (now.find_app(b.name) == nullptr) d.changes.push_back("apps." + b.name + ": added");
  }
}

}  // namespace

ReloadDiff diff_for_reload(const Config& now, const Config& next) {
  ReloadDiff d;
  // A setting that differs: listed as changed, and as needing a restart when `why` is given.
  auto setting = [&d](bool differs, const std::string& name, std::string_view why = {}) {
    if (!differs) return;
    d.changes.push_back(name + ": changed");
    if (!why.empty()) d.needs_restart.push_back(name + " (" + std::string(why) + ")");
  };

  if (now.workers != next.workers) {
    d.changes.push_back("workers: changed");
    d.needs_restart.push_back("workers: " + std::to_string(now.workers) + " -> " + std::to_string(next.workers) +
                              " (the number of event loops is fixed at start)");
  }
  // Listeners: RTMP and RTMPS ones are opened and closed to match; the others live on every loop.
  if (now.rtmp.listen != next.rtmp.listen) {
    d.changes.push_back("rtmp.listen: " + listen_text(now.rtmp.listen) + " -> " + listen_text(next.rtmp.listen));
  }
  if (now.rtmps.listen != next.rtmps.listen) {
    d.changes.push_back("rtmps.listen: " + listen_text(now.rtmps.listen) + " -> " + listen_text(next.rtmps.listen));
  }
  setting(now.rtmps.enabled() != next.rtmps.enabled(), "rtmps on or off",
          "the RTMPS certificates load at start, and only when rtmps.listen is set");
  setting(now.rtmp.proxy_protocol != next.rtmp.proxy_protocol || now.rtmps.proxy_protocol != next.rtmps.proxy_protocol,
          "rtmp(s).proxy_protocol", "the listeners' PROXY header reader is made at start");
  setting(now.rtmp.io_uring != next.rtmp.io_uring, "rtmp.io_uring", "each loop's ring is set up at start");
  {
    const PlayerQueueConfig &a = now.rtmp.player_queue, &b = next.rtmp.player_queue;
    setting(a.write_delay != b.write_delay || a.write_budget != b.write_budget ||
                a.write_budget_players != b.write_budget_players || a.write_lanes != b.write_lanes,
            "rtmp.player_queue.write_*", "each loop's write scheduler is set up at start");
    setting(a.soft_bytes != b.soft_bytes || a.hard_bytes != b.hard_bytes || a.soft_delay != b.soft_delay ||
                a.hard_delay != b.hard_delay,
            "rtmp.player_queue limits");
  }
  setting(now.rtmp.limits.reassembly_budget != next.rtmp.limits.reassembly_budget, "rtmp.limits.reassembly_budget",
          "one budget is shared by every connection from start");
  {
    RtmpConfig a = now.rtmp, b = next.rtmp;  // the rest of rtmp: read by each connection as it goes
    a.listen = b.listen = {};
    a.proxy_protocol = b.proxy_protocol = {};
    a.io_uring = b.io_uring;
    a.player_queue = b.player_queue;
    a.limits.reassembly_budget = b.limits.reassembly_budget;
    setting(a != b, "rtmp");
  }
  setting(now.rtmps.certificates != next.rtmps.certificates || now.rtmps.seal_records != next.rtmps.seal_records,
          "rtmps.certificates / record_layer",
          "the files are watched from start: replace their contents (or send SIGHUP) instead, docs/tls.md");
  {
    RtmpsConfig a = now.https, b = next.https;  // its listeners are opened and closed like RTMP's
    a.listen = b.listen = {};
    setting(a != b || now.https.enabled() != next.https.enabled(), "https (on or off, certificates, record_layer)",
            "the HTTPS certificates load at start, and only when https.listen is set");
    if (now.https.listen != next.https.listen) {
      d.changes.push_back("https.listen: " + listen_text(now.https.listen) + " -> " + listen_text(next.https.listen));
    }
  }
  {
    const HttpConfig &a = now.http, &b = next.http;
    setting(a.enabled != b.enabled || a.proxy_protocol != b.proxy_protocol, "http (on or off, proxy_protocol)",
            "the HTTP side and its PROXY header reader are set up at start");
    if (a.listen != b.listen) {
      d.changes.push_back("http.listen: " + listen_text(a.listen) + " -> " + listen_text(b.listen));
    }
    setting(a.api != b.api, "http.api");
    setting(a.upload_token != b.upload_token || a.upload_max_size != b.upload_max_size ||
                a.upload_extensions != b.upload_extensions,
            "http.upload");
  }
  if (now.log.level != next.log.level) {
    d.changes.push_back("log.level: " + std::string(log_level_name(now.log.level)) + " -> " +
                        std::string(log_level_name(next.log.level)));
  }
  setting(now.log.format != next.log.format, "log.format", "the log's output is set up at start");
  setting(now.hooks != next.hooks, "hooks");
  setting(now.limits != next.limits, "limits");
  setting(now.server_id != next.server_id, "server_id");
  setting(now.cluster != next.cluster, "cluster", "the node's registry connection and identity are set up at start");
  setting(now.srt != next.srt, "srt", "the SRT listener and its socket options are set up at start");
  setting(now.webrtc != next.webrtc, "webrtc", "each loop's WebRTC port is bound at start");
  setting(now.shutdown != next.shutdown, "shutdown");
  setting(now.reload != next.reload, "reload");
  setting(now.access_log != next.access_log, "access_log");
  diff_apps(now, next, d);
  return d;
}

}  // namespace sluice::config
