#include "server/api/metrics_text.hpp"

#include <cstdio>
#include <functional>
#include <optional>
#include <nlohmann/json.hpp>
#include <string_view>

#include "server/api/alert_monitor.hpp"
#include "server/api/api_view.hpp"
#include "server/api/hls_api.hpp"
#include "server/api/metrics_writer.hpp"
#include "server/api/config_reload_api.hpp"
#include "server/api/relay_api.hpp"
#include "server/api/snapshot_metrics.hpp"
#include "server/io/guard_counters.hpp"
#include "server/io/loop_lag.hpp"
#include "server/io/process_figures.hpp"
#include "server/record/record_stats.hpp"

namespace sluice::server {

namespace {

using json = nlohmann::json;

// Prometheus label values escape backslash, double quote and newline.
std::string label(std::string_view v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

// Uptime, loop lag, connections, streams, dropped frames and the guards' counters.
void server_series(MetricsText& out, ApiView& server, const json& s) {
  out.metric("sluice_uptime_seconds", "gauge", "Seconds since the server started.");
  out.value("sluice_uptime_seconds", s["uptime_s"].get<double>());
  // Loop 0's (the one serving this); a blocked loop shows here first.
  out.metric("sluice_loop_lag_seconds", "summary", "How late loop 0 ran a 50 ms timer, over the last minute.");
  for (const char* q : {"0.5", "0.99", "1"}) {
    out.value(std::string("sluice_loop_lag_seconds{quantile=\"") + q + "\"}",
              server.loop_lag().quantile_seconds(std::stod(q)));
  }
  out.metric("sluice_connections", "gauge", "Open client connections.");
  out.value("sluice_connections{protocol=\"rtmp\"}", static_cast<double>(server.connection_count()));
  out.value("sluice_connections{protocol=\"http\"}", static_cast<double>(server.http_connection_count()));
  out.value("sluice_connections{protocol=\"srt\"}", s["connections"]["srt"].get<double>());
  out.metric("sluice_streams", "gauge", "Streams known to the server (published or waited for).");
  out.value("sluice_streams", s["streams"]["total"].get<double>());
  out.metric("sluice_streams_live", "gauge", "Streams with a publisher.");
  out.value("sluice_streams_live", s["streams"]["live"].get<double>());
  out.metric("sluice_dropped_frames_total", "counter", "Video frames slow players lost (the drop-to-keyframe policy).");
  out.value("sluice_dropped_frames_total", s["dropped_frames"].get<double>());
  out.metric("sluice_keyframe_requests_total", "counter",
             "Keyframe requests of players passed on to their publisher (a WebRTC player's PLI or FIR, at most five a "
             "second per player), whether or not the publisher can make one.");
  out.value("sluice_keyframe_requests_total", s["keyframe_requests"].get<double>());
  out.metric("sluice_guard_events_total", "counter",
             "Times a bound refused or ended something, by event (docs/configuration.md, Limits).");
  for (size_t i = 0; i < kGuardEvents.size(); ++i) {
    out.value("sluice_guard_events_total{event=\"" + std::string(kGuardEvents[i].name) + "\"}",
              static_cast<double>(GuardCounters::get(static_cast<GuardEvent>(i))));
  }
}

// The standard process collector's names, so dashboards made for any exporter read them.
void process_series(MetricsText& out) {
  const ProcessFigures p = process_figures();
  out.metric("process_cpu_seconds_total", "counter", "Total user and system CPU time spent in seconds.");
  out.value("process_cpu_seconds_total", p.cpu_seconds);
  out.metric("process_resident_memory_bytes", "gauge", "Resident memory size in bytes.");
  out.value("process_resident_memory_bytes", static_cast<double>(p.resident_bytes));
  out.metric("process_open_fds", "gauge", "Number of open file descriptors.");
  out.value("process_open_fds", static_cast<double>(p.open_fds));
  out.metric("process_start_time_seconds", "gauge", "Start time of the process since unix epoch in seconds.");
  out.value("process_start_time_seconds", p.start_time_unix_s);
}

void record_series(MetricsText& out) {
  RecordStats& rec = RecordStats::get();
  out.metric("sluice_record_files_total", "counter", "Recording files finished (ok) or given up (failed).");
  out.value("sluice_record_files_total{result=\"ok\"}", static_cast<double>(rec.files_done.load()));
  out.value("sluice_record_files_total{result=\"failed\"}", static_cast<double>(rec.files_failed.load()));
  out.metric("sluice_record_bytes_total", "counter", "Bytes written to recordings.");
  out.value("sluice_record_bytes_total", static_cast<double>(rec.bytes_written.load()));
  out.metric("sluice_record_files_open", "gauge", "Recordings being written or finished now.");
  out.value("sluice_record_files_open", static_cast<double>(rec.files_open.load()));
  out.metric("sluice_record_files_removed_total", "counter", "Finished recordings removed by record.keep.");
  out.value("sluice_record_files_removed_total", static_cast<double>(rec.files_removed.load()));
}

// SRT's sums over the open connections (docs/srt.md, "Figures").
void srt_series(MetricsText& out, const json& s) {
  const json& t = s["srt"];
  out.metric("sluice_srt_bytes", "gauge", "Bytes received and sent by the open SRT connections.");
  out.value("sluice_srt_bytes{direction=\"in\"}", t["bytes_in"].get<double>());
  out.value("sluice_srt_bytes{direction=\"out\"}", t["bytes_out"].get<double>());
  out.metric("sluice_srt_packets", "gauge",
             "SRT packets of the open connections: lost on the way, retransmitted, dropped as too late.");
  out.value("sluice_srt_packets{kind=\"lost\"}", t["packets_lost"].get<double>());
  out.value("sluice_srt_packets{kind=\"retransmitted\"}", t["packets_retransmitted"].get<double>());
  out.value("sluice_srt_packets{kind=\"dropped\"}", t["packets_dropped"].get<double>());
}

void http_series(MetricsText& out, const json& s) {
  out.metric("sluice_http_requests_total", "counter", "HTTP requests received.");
  out.value("sluice_http_requests_total", s["http_requests"].get<double>());
  out.metric("sluice_http_bytes_total", "counter", "Bytes received and sent on HTTP connections.");
  out.value("sluice_http_bytes_total{direction=\"in\"}", s["bytes"]["http_in"].get<double>());
  out.value("sluice_http_bytes_total{direction=\"out\"}", s["bytes"]["http_out"].get<double>());
  if (s["bytes"].contains("rtmp_in_open_connections")) {
    out.metric("sluice_rtmp_open_connection_bytes", "gauge", "Bytes received and sent by the open RTMP connections.");
    out.value("sluice_rtmp_open_connection_bytes{direction=\"in\"}",
              s["bytes"]["rtmp_in_open_connections"].get<double>());
    out.value("sluice_rtmp_open_connection_bytes{direction=\"out\"}",
              s["bytes"]["rtmp_out_open_connections"].get<double>());
  }
}

// Each loop's write hold, and the cluster's registry figures on a node of a cluster.
void hold_and_cluster_series(MetricsText& out, const json& s) {
  out.metric("sluice_write_hold_seconds", "gauge",
             "How long each loop now holds live media before writing it (adaptive).");
  for (size_t w = 0; w < s["write_hold_ms"].size(); ++w) {
    out.value("sluice_write_hold_seconds{worker=\"" + std::to_string(w) + "\"}",
              s["write_hold_ms"][w].get<double>() / 1000);
  }
  if (const json& c = s["cluster"]; c.is_object()) {
    out.metric("sluice_cluster_registry_up", "gauge",
               "1 while every loop's connection to the cluster registry (Redis) is up.");
    out.value("sluice_cluster_registry_up", c["connected"].get<bool>() ? 1 : 0);
    out.metric("sluice_cluster_registry_rtt_seconds", "gauge",
               "The slowest loop's last PING round trip to the registry.");
    out.value("sluice_cluster_registry_rtt_seconds", c["rtt_ms"].get<double>() / 1000);
    out.metric("sluice_cluster_streams_owned", "gauge", "Streams this node owns in the cluster registry.");
    out.value("sluice_cluster_streams_owned", double(c["owned"].size()));
  }
}

// What each publisher really sends (docs/api.md, "Stream health"): a series per stream and track
// for the streams with a publisher, at most kHealthSeriesStreams of them (in name order) so a
// server with many streams keeps its scrape bounded: 5 video and 3 audio series a stream.
constexpr size_t kHealthSeriesStreams = 1000;

void health_series(MetricsText& out, const json& streams) {
  struct PerTrack {
    const char* name;
    const char* help;
    const char* track;
    std::function<std::optional<double>(const json&)> get;
  };
  auto number = [](const json& t, const char* key) -> std::optional<double> {
    const json& v = t[key];
    return v.is_number() ? std::optional(v.get<double>()) : std::nullopt;
  };
  const PerTrack per_track[] = {
      {"sluice_stream_fps", "Frames per second the publisher sends, from the media timestamps of the last 5 s.",
       nullptr, [&](const json& t) { return number(t, "fps"); }},
      {"sluice_stream_track_kbps", "Bit rate of the track's payload over the last 10 s, kbit/s.", nullptr,
       [&](const json& t) { return number(t, "kbps_10s"); }},
      {"sluice_stream_idle_seconds", "Time since the track's last frame.", nullptr,
       [&](const json& t) -> std::optional<double> {
         auto ms = number(t, "idle_ms");
         return ms ? std::optional(*ms / 1000) : std::nullopt;
       }},
      {"sluice_stream_keyframe_interval_seconds", "The last interval between two keyframes.", "video",
       [&](const json& t) -> std::optional<double> {
         const json& k = t["keyframe_interval"];
         return k.is_object() ? std::optional(k["last_s"].get<double>()) : std::nullopt;
       }},
      {"sluice_stream_keyframe_interval_max_seconds", "The longest of the last 16 keyframe intervals.", "video",
       [&](const json& t) -> std::optional<double> {
         const json& k = t["keyframe_interval"];
         return k.is_object() ? std::optional(k["max_s"].get<double>()) : std::nullopt;
       }},
  };
  for (const auto& pt : per_track) {
    bool announced = false;
    size_t shown = 0;
    for (const auto& st : streams) {
      const json& h = st["health"];
      if (!h.is_object() || ++shown > kHealthSeriesStreams) continue;
      for (const char* track : {"video", "audio"}) {
        if (pt.track != nullptr && std::string_view(pt.track) != track) continue;
        const json& t = h[track];
        if (!t.is_object()) continue;
        auto v = pt.get(t);
        if (!v) continue;
        if (!announced) out.metric(pt.name, "gauge", pt.help);
        announced = true;
        out.value(
            std::string(pt.name) + "{stream=\"" + label(st["name"].get<std::string>()) + "\",track=\"" + track + "\"}",
            *v);
      }
    }
  }
}

// One family per figure, a series per stream.
void stream_series(MetricsText& out, const json& streams) {
  struct PerStream {
    const char* name;
    const char* type;
    const char* help;
    std::function<double(const json&)> get;
  };
  const PerStream per_stream[] = {
      {"sluice_stream_live", "gauge", "1 while the stream has a publisher.",
       [](const json& j) { return j["live"].get<bool>() ? 1.0 : 0.0; }},
      {"sluice_stream_players", "gauge", "Players of the stream (RTMP and HTTP-FLV).",
       [](const json& j) { return j["players"].get<double>(); }},
      {"sluice_stream_http_flv_players", "gauge", "HTTP-FLV players of the stream.",
       [](const json& j) { return j["http_flv_players"].get<double>(); }},
      {"sluice_stream_hls_viewers", "gauge", "HLS viewers of the stream.",
       [](const json& j) { return j["hls"].is_null() ? 0.0 : j["hls"]["viewers"].get<double>(); }},
      {"sluice_stream_ingest_bytes_total", "counter", "Media bytes published to the stream.",
       [](const json& j) { return j["bytes_in"].get<double>(); }},
      {"sluice_stream_ingest_frames_total", "counter", "Media messages published to the stream.",
       [](const json& j) { return j["frames_in"].get<double>(); }},
      {"sluice_stream_ingest_kbps", "gauge", "Ingest bit rate over the last seconds, kbit/s.",
       [](const json& j) { return j["bitrate_in_kbps"].get<double>(); }},
      {"sluice_stream_dropped_frames_total", "counter", "Frames the stream's slow players lost.",
       [](const json& j) { return j["dropped_frames"].get<double>(); }},
      {"sluice_stream_gop_cache_bytes", "gauge", "Bytes in the stream's GOP cache.",
       [](const json& j) { return j["gop_cache"]["bytes"].get<double>(); }},
  };
  for (const auto& ps : per_stream) {
    if (streams.empty()) break;
    out.metric(ps.name, ps.type, ps.help);
    for (const auto& st : streams)
      out.value(std::string(ps.name) + "{stream=\"" + label(st["name"].get<std::string>()) + "\"}", ps.get(st));
  }
  health_series(out, streams);
}

}  // namespace

std::string prometheus_text(ApiView& server, HttpService& http, const json& figures, const json& streams) {
  std::string m;
  MetricsText out{m};
  server_series(out, server, figures);
  process_series(out);
  record_series(out);
  http_series(out, figures);
  snapshot_metrics(m);
  srt_series(out, figures);
  hls_metrics(server, http, m);
  hold_and_cluster_series(out, figures);
  relay_metrics(server, m);
  reload_metrics(server, m);
  if (const AlertMonitor* alerts = server.stream_alerts()) alerts->metrics(m);
  stream_series(out, streams);
  return m;
}

}  // namespace sluice::server
