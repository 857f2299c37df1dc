#include "server/api/history_api.hpp"

#include <cmath>
#include <nlohmann/json.hpp>

#include "server/api/api_json.hpp"
#include "server/api/api_view.hpp"
#include "server/api/history.hpp"
#include "server/api/http_figures.hpp"
#include "server/http/service.hpp"
#include "server/io/loop_lag.hpp"
#include "server/io/process_figures.hpp"
#include "server/io/wall_clock.hpp"
#include "server/live/stream_registry.hpp"
#include "server/live/worker_mesh.hpp"
#include "server/rtmp/connection.hpp"
#include "server/srt/srt_connection.hpp"
#include "server/srt/srt_service.hpp"

namespace sluice::server {

namespace {

using nlohmann::json;

// One stream's figures and whether they come from its publisher's loop (which then tells the
// others' apart from their players, as the streams list merges them: stats_api.cpp).
struct StreamFigures {
  HistoryInput::Stream s;
  bool has_publisher = false;
  bool live = false;
};

void merge(std::map<std::string, StreamFigures, std::less<>>& all, const std::string& key, const StreamFigures& f) {
  auto [it, added] = all.try_emplace(key, f);
  if (added) return;
  StreamFigures& have = it->second;
  double players = have.s.players + f.s.players;
  if (f.has_publisher || (!have.has_publisher && !have.live)) have = f;
  have.s.players = players;
}

void add_streams(ApiView& server, HistoryInput& in) {
  std::map<std::string, StreamFigures, std::less<>> all;
  const uint64_t now = server.now_ms();
  for (const auto& [key, e] : server.registry().entries()) {
    StreamFigures f;
    f.has_publisher = e.publisher != nullptr;
    f.live = e.hub->has_publisher();
    f.s.players = static_cast<double>(e.hub->subscriber_count() - e.forwarders.size());
    f.s.ingest_kbps = e.kbps;
    if (f.has_publisher) {
      const media::StreamHealth::Figures h = e.hub->health().figures(now);
      if (h.video.present) f.s.fps = h.video.fps;
    }
    merge(all, key, f);
  }
  if (WorkerMesh* mesh = server.mesh()) {
    for (const auto& shared : mesh->snapshots(server.worker())) {
      auto streams = shared->find("streams");
      if (streams == shared->end()) continue;
      for (auto it = streams->begin(); it != streams->end(); ++it) {
        const json& j = *it;
        StreamFigures f;
        f.has_publisher = !j.value("publisher", json()).is_null();
        f.live = j.value("live", false);
        f.s.players = j.value("players", 0.0);
        f.s.ingest_kbps = j.value("bitrate_in_kbps", 0.0);
        const json health = j.value("health", json());
        if (health.is_object() && health["video"].is_object()) f.s.fps = health["video"].value("fps", NAN);
        merge(all, it.key(), f);
      }
    }
  }
  for (auto& [key, f] : all) {
    in.players += f.s.players;
    in.streams.emplace(key, f.s);
  }
}

// The open RTMP and SRT connections' counters, this loop's and the other loops' (their client rows).
void add_connections(ApiView& server, HistoryInput& in) {
  for (const RtmpConnection* c : server.connections())
    in.connections.push_back({c->id(), c->bytes_in(), c->bytes_out()});
  if (SrtService* srt = server.srt()) {
    for (const auto& [s, c] : srt->connections()) in.connections.push_back({c->id(), c->bytes_in(), c->bytes_out()});
  }
  server.for_each_other_loop_client([&](const json& row) {
    if (row.value("protocol", "") == "http") return;  // in the HTTP totals
    in.connections.push_back(
        {row.value("id", uint64_t{0}), row.value("bytes_in", uint64_t{0}), row.value("bytes_out", uint64_t{0})});
  });
}

}  // namespace

void sample_history(ApiView& server, HttpService& http) {
  ApiHistory* history = server.history();
  const uint64_t now = server.now_ms();
  if (history == nullptr || !history->due(now)) return;
  HistoryInput in;
  in.unix_ms = wall_clock_ms();
  const ProcessFigures p = process_usage();
  in.cpu_seconds = p.cpu_seconds;
  in.rss_bytes = static_cast<double>(p.resident_bytes);
  const HttpTotals h = http_totals(server, &http);
  in.http_bytes_in = h.bytes_in;
  in.http_bytes_out = h.bytes_out;
  add_connections(server, in);
  add_streams(server, in);
  in.hls_viewers = static_cast<double>(http.hls_sessions().size());
  in.connections_rtmp = static_cast<double>(server.connection_count());
  in.connections_http = static_cast<double>(server.http_connection_count());
  in.connections_srt = static_cast<double>(SrtService::total_connections());
  in.loop_lag_p99_s = server.loop_lag().quantile_seconds(0.99);
  in.loop_lag_max_s = server.loop_lag().quantile_seconds(1);
  history->add(now, in);
}

HttpApiReply history_api(ApiView& server, const HttpRequest& req) {
  ApiHistory* history = server.history();
  if (history == nullptr) return error_reply(404, "no history on this server");
  std::string stream;
  for (size_t at = 0; at < req.query.size();) {
    size_t end = req.query.find('&', at);
    if (end == std::string::npos) end = req.query.size();
    std::string_view part = std::string_view(req.query).substr(at, end - at);
    if (part.starts_with("stream=") && !http_percent_decode(part.substr(7), stream))
      return error_reply(400, "bad percent-encoding");
    at = end + 1;
  }
  HttpApiReply r;
  json j = stream.empty() ? history->server_json() : history->stream_json(stream);
  if (j.is_null()) return error_reply(404, "no history for this stream");
  r.body = j.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
  return r;
}

}  // namespace sluice::server
