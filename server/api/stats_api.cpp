#include "server/api/stats_api.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "server/api/api_json.hpp"
#include "server/cluster/cluster_service.hpp"
#include "server/api/cluster_api.hpp"
#include "server/api/hls_api.hpp"
#include "server/api/alert_monitor.hpp"
#include "server/api/history_api.hpp"
#include "server/api/ingest_api.hpp"
#include "server/api/http_figures.hpp"
#include "server/api/srt_figures.hpp"
#include "server/http/connection.hpp"
#include "server/http/service.hpp"
#include "server/record/record_stats.hpp"
#include "server/api/record_api.hpp"
#include "server/api/relay_api.hpp"
#include "server/relay/relay_manager.hpp"
#include "server/http/util.hpp"
#include "server/io/guard_counters.hpp"
#include "server/rtmp/connection.hpp"
#include "server/srt/srt_service.hpp"
#include "server/api/api_view.hpp"
#include "server/api/config_reload_api.hpp"
#include "server/api/kicked_clients.hpp"
#include "server/io/loop_lag.hpp"
#include "server/live/stream_registry.hpp"
#include "server/live/worker_mesh.hpp"
#include "config/config.hpp"
#include "server/api/metrics_text.hpp"
#include "server/api/stream_health_json.hpp"
#include "server/api/stream_json.hpp"

namespace sluice::server {

namespace {

using nlohmann::json;

double seconds(uint64_t ms) { return static_cast<double>(ms) / 1000.0; }

// What one worker knows of a stream. On the publisher's worker that is everything; a mirror
// worker knows its own players (and the codecs, from the frames it was sent).
StreamFacts stream_facts(std::string_view key, const StreamRegistry::Entry& e, uint64_t now_ms) {
  const media::StreamHub& hub = *e.hub;
  StreamFacts f;
  f.key = key;
  f.live = hub.has_publisher();
  if (e.publisher) {
    f.has_publisher = true;
    f.publisher_id = e.publisher->id();
    f.publisher_address = e.publisher->peer();
    f.publisher_since_unix_ms = e.published_since_ms;
  }
  f.takeovers = e.takeovers;
  // The owner's hub counts one forwarder per other worker among its subscribers: not players.
  f.players = hub.subscriber_count() - e.forwarders.size();
  f.info = hub.info();
  f.frames_in = hub.stats().frames_in;
  f.bytes_in = hub.stats().bytes_in;
  f.keyframes_in = hub.stats().keyframes_in;
  f.publish_sessions = hub.stats().publish_sessions;
  f.gop_frames = hub.gop_frames();
  f.gop_bytes = hub.gop_bytes();
  f.bitrate_in_kbps = std::round(e.kbps * 10) / 10;
  f.dropped_frames = e.dropped_frames;
  const media::StreamHealth::Figures health = hub.health().figures(now_ms);
  if (health.publish_starts != 0) f.health = stream_health_json(health, hub.metadata());
  return f;
}

json worker_stream_json(const std::string& key, const StreamRegistry::Entry& e, uint64_t now_ms) {
  return stream_facts_json(stream_facts(key, e, now_ms));
}

}  // namespace

// Every worker's view of every stream, merged: players add up, the rest comes from the worker
// that has the publisher (or, when nobody publishes, from any).
std::map<std::string, json> merged_streams(ApiView& server) {
  std::map<std::string, json> out;
  auto merge = [&](const std::string& key, json j) {
    auto it = out.find(key);
    if (it == out.end()) {
      out.emplace(key, std::move(j));
      return;
    }
    json& have = it->second;
    size_t players = have["players"].get<size_t>() + j["players"].get<size_t>();
    uint64_t dropped = have["dropped_frames"].get<uint64_t>() + j["dropped_frames"].get<uint64_t>();
    if (!j["publisher"].is_null() || (have["publisher"].is_null() && !have["live"].get<bool>())) have = std::move(j);
    have["players"] = players;
    have["dropped_frames"] = dropped;
  };
  for (const auto& [key, e] : server.registry().entries()) merge(key, worker_stream_json(key, e, server.now_ms()));
  if (WorkerMesh* mesh = server.mesh()) {
    for (const auto& shared : mesh->snapshots(server.worker())) {
      const json& snap = *shared;
      if (!snap.contains("streams")) continue;
      for (const auto& [key, j] : snap["streams"].items()) merge(key, j);
    }
  }
  return out;
}

namespace {

json stream_json(const std::string& key, json j, const std::map<std::string, size_t, std::less<>>& flv_readers) {
  auto flv = flv_readers.find(key);
  j["http_flv_players"] = flv == flv_readers.end() ? 0 : flv->second;
  return j;
}

json streams_json(ApiView& server, std::map<std::string, json> streams, HttpService& http) {
  add_hls_streams(server, http, streams);
  auto flv = http_totals(server, &http).flv_readers;
  json arr = json::array();
  for (auto& [key, j] : streams) arr.push_back(stream_json(key, std::move(j), flv));
  return arr;
}

// The streams list written as text (issue 16): merged as merged_streams() merges, the same text
// as streams_json() dumped, without a tree per stream. A stream is this worker's (written from its
// registry entry) or another worker's (its snapshot's object), with every worker's players and
// dropped frames added up.
struct StreamRow {
  std::string_view key;
  const StreamRegistry::Entry* local = nullptr;
  const json* remote = nullptr;
  size_t players = 0;
  uint64_t dropped = 0;
};

// Sorted by key; `snapshots` holds what the remote rows point into.
std::vector<StreamRow> stream_rows(ApiView& server, std::vector<std::shared_ptr<const json>>& snapshots) {
  std::vector<StreamRow> rows;
  const auto& entries = server.registry().entries();
  rows.reserve(entries.size());
  for (const auto& [key, e] : entries) {
    rows.push_back(StreamRow{key, &e, nullptr, e.hub->subscriber_count() - e.forwarders.size(), e.dropped_frames});
  }
  std::sort(rows.begin(), rows.end(), [](const StreamRow& a, const StreamRow& b) { return a.key < b.key; });
  WorkerMesh* mesh = server.mesh();
  if (mesh == nullptr) return rows;
  snapshots = mesh->snapshots(server.worker());
  for (const auto& shared : snapshots) {
    const json& snap = *shared;
    auto streams = snap.find("streams");
    if (streams == snap.end()) continue;
    for (auto it = streams->begin(); it != streams->end(); ++it) {
      const json& j = *it;
      std::string_view key = it.key();
      size_t players = j.at("players").get<size_t>();
      uint64_t dropped = j.at("dropped_frames").get<uint64_t>();
      auto at = std::lower_bound(rows.begin(), rows.end(), key,
                                 [](const StreamRow& r, std::string_view k) { return r.key < k; });
      if (at == rows.end() || at->key != key) {
        rows.insert(at, StreamRow{key, nullptr, &j, players, dropped});
        continue;
      }
      // As in merged_streams(): the worker with the publisher (or, when none has it, any) tells the rest.
      bool have_publisher = at->local ? at->local->publisher != nullptr : !at->remote->at("publisher").is_null();
      bool have_live = at->local ? at->local->hub->has_publisher() : at->remote->at("live").get<bool>();
      if (!j.at("publisher").is_null() || (!have_publisher && !have_live)) {
        at->local = nullptr;
        at->remote = &j;
      }
      at->players += players;
      at->dropped += dropped;
    }
  }
  return rows;
}

// GET /api/v1/streams (every stream, an array) or, with `only`, /api/v1/streams/{only} (false
// when there is no such stream), written into body.
bool write_streams(ApiView& server, HttpService& http, const std::string* only, std::string& body) {
  std::vector<std::shared_ptr<const json>> snapshots;
  std::vector<StreamRow> rows = stream_rows(server, snapshots);
  if (only != nullptr) {
    auto it = std::find_if(rows.begin(), rows.end(), [&](const StreamRow& r) { return r.key == *only; });
    if (it == rows.end()) return false;
    rows = {*it};
  }
  std::map<std::string, json> hls;
  for (const StreamRow& r : rows) hls.emplace_hint(hls.end(), std::string(r.key), json());
  add_hls_streams(server, http, hls);
  auto flv = http_totals(server, &http).flv_readers;
  body.reserve(1024 * rows.size() + 8);
  JsonWriter w(body);
  if (only == nullptr) w.begin_array();
  auto h = hls.begin();
  for (const StreamRow& r : rows) {
    auto readers = flv.find(r.key);
    StreamListExtras extras{&h->second.at("hls"), &h->second.at("hls_variant"),
                            readers == flv.end() ? 0 : readers->second};
    ++h;
    if (r.local != nullptr) {
      StreamFacts f = stream_facts(r.key, *r.local, server.now_ms());
      f.players = r.players;
      f.dropped_frames = r.dropped;
      write_stream(w, f, extras);
      continue;
    }
    json j = *r.remote;
    j["players"] = r.players;
    j["dropped_frames"] = r.dropped;
    j["hls"] = *extras.hls;
    j["hls_variant"] = *extras.hls_variant;
    j["http_flv_players"] = extras.http_flv_players;
    w.value(j);
  }
  if (only == nullptr) w.end_array();
  body += '\n';
  return true;
}

json rtmp_client_json(ApiView& server, RtmpConnection& c,
                      const std::map<const SessionPeer*, std::vector<std::string>>& publishing) {
  json j{{"id", c.id()},
         {"protocol", c.tls() ? "rtmps" : "rtmp"},
         {"address", c.peer()},
         {"app", c.app()},
         {"worker", server.worker()}};
  auto pub = publishing.find(&c);
  j["publishing"] = pub == publishing.end() ? json::array() : json(pub->second);
  j["playing"] = c.playing_streams();
  json recs = json::array();
  for (const auto& r : c.recordings()) {
    recs.push_back(
        {{"stream", r.stream}, {"path", r.path}, {"bytes", r.bytes}, {"duration_s", r.duration_ms / 1000.0}});
  }
  j["recordings"] = recs;
  j["bytes_in"] = c.bytes_in();
  j["bytes_out"] = c.bytes_out();
  j["duration_s"] = seconds(server.now_ms() - c.started_ms());
  return j;
}

std::map<const SessionPeer*, std::vector<std::string>> publishing_keys(ApiView& server) {
  std::map<const SessionPeer*, std::vector<std::string>> publishing;
  for (const auto& [key, e] : server.registry().entries())
    if (e.publisher) publishing[e.publisher].push_back(key);
  return publishing;
}

json clients_json(ApiView& server, HttpService& http) {
  uint64_t now = server.now_ms();
  auto publishing = publishing_keys(server);
  std::vector<std::pair<uint64_t, json>> rows;
  for (RtmpConnection* c : server.connections()) {
    if (c->closing()) continue;
    rows.emplace_back(c->id(), rtmp_client_json(server, *c, publishing));
  }
  server.for_each_other_loop_client([&rows](const json& j) { rows.emplace_back(j["id"].get<uint64_t>(), j); });
  json http_rows = json::array();
  add_http_clients(http, now, server.worker(), http_rows);
  if (SrtService* srt = server.srt()) add_srt_clients(*srt, now, server.worker(), http_rows);
  for (json& j : http_rows) rows.emplace_back(j["id"].get<uint64_t>(), std::move(j));
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  json arr = json::array();
  for (auto& r : rows) arr.push_back(std::move(r.second));
  return arr;
}

json server_json(ApiView& server, HttpService& http, const std::map<std::string, json>& streams) {
  uint64_t now = server.now_ms();
  size_t live = 0;
  for (const auto& [key, j] : streams) live += j["live"].get<bool>();
  const HttpTotals h = http_totals(server, &http);
  const SrtTotals srt = srt_totals(server);
  json bytes{{"http_in", h.bytes_in}, {"http_out", h.bytes_out}, {"srt_in", srt.bytes_in}, {"srt_out", srt.bytes_out}};
  uint64_t rtmp_in = 0, rtmp_out = 0;
  uint64_t dropped = server.registry().dropped_frames();
  uint64_t keyframe_requests = server.registry().keyframe_requests();
  for (RtmpConnection* c : server.connections()) {
    rtmp_in += c->bytes_in();
    rtmp_out += c->bytes_out();
  }
  json holds = json::array({server.write_hold_ms()});
  json cluster_loops = json::array({cluster_loop_json(server)});
  if (WorkerMesh* mesh = server.mesh()) {
    for (const auto& shared : mesh->snapshots(server.worker())) {
      const json& snap = *shared;
      rtmp_in += snap.value("bytes_in", uint64_t{0});
      rtmp_out += snap.value("bytes_out", uint64_t{0});
      dropped += snap.value("dropped_frames", uint64_t{0});
      keyframe_requests += snap.value("keyframe_requests", uint64_t{0});
      holds.push_back(snap.value("write_hold_ms", uint64_t{0}));
      cluster_loops.push_back(snap.value("cluster", json()));
    }
  }
  // Open RTMP connections only (closed ones are not counted anywhere yet).
  bytes["rtmp_in_open_connections"] = rtmp_in;
  bytes["rtmp_out_open_connections"] = rtmp_out;
  return json{{"name", "sluice"},
              {"version", SLUICE_VERSION},
              {"uptime_s", seconds(now - server.started_ms())},
              {"connections",
               {{"rtmp", server.connection_count()},
                {"http", server.http_connection_count()},
                {"srt", srt.connections},
                {"total", server.connection_count() + server.http_connection_count() + srt.connections},
                {"max", server.config().rtmp.max_connections}}},
              {"srt", srt_totals_json(srt)},
              {"streams", {{"total", streams.size()}, {"live", live}}},
              {"workers", server.mesh() ? server.mesh()->size() : 1},
              {"bytes", bytes},
              {"dropped_frames", dropped},
              {"keyframe_requests", keyframe_requests},
              {"http_requests", h.requests},
              {"hls", hls_server_json(server, http)},
              {"write_hold_ms", holds},
              {"cluster", cluster_json(server, cluster_loops)}};
}

std::string metrics_text(ApiView& server, HttpService& http) {
  // One merged view of the streams serves both the totals and the per-stream series.
  auto merged = merged_streams(server);
  const json figures = server_json(server, http, merged);
  const json streams = streams_json(server, std::move(merged), http);
  return prometheus_text(server, http, figures, streams);
}

HttpApiReply delete_client(ApiView& server, HttpService& http, std::string_view id_text, uint64_t self_id) {
  uint64_t id = 0;
  auto [p, ec] = std::from_chars(id_text.data(), id_text.data() + id_text.size(), id);
  if (ec != std::errc() || p != id_text.data() + id_text.size()) return error_reply(404, "no such client");
  if (id == self_id) return error_reply(409, "a connection cannot close itself through the API");
  for (RtmpConnection* c : server.connections()) {
    if (c->id() == id && !c->closing()) {
      c->close("closed through the API");
      HttpApiReply r;
      r.status = 204;
      return r;
    }
  }
  if (HttpConnection* c = http.find(id)) {
    c->close("closed through the API");
    HttpApiReply r;
    r.status = 204;
    return r;
  }
  if (SrtService* srt = server.srt(); srt && srt->close_client(id, "closed through the API")) {
    HttpApiReply r;
    r.status = 204;
    return r;
  }
  // On another loop: asked to close there. One asked already is not found (a second DELETE is a
  // 404, as on this loop).
  std::optional<uint32_t> owner;
  server.for_each_other_loop_client([&](const json& j) {
    if (j["id"].get<uint64_t>() == id) owner = j["worker"].get<uint32_t>();
  });
  if (!owner) return error_reply(404, "no such client");
  auto e = std::make_unique<MeshEvent>();
  e->kind = MeshEvent::Kind::Kick;
  e->id = id;
  server.mesh()->post(*owner, std::move(e));
  server.kicked_clients().add(id, server.now_ms());
  HttpApiReply r;
  r.status = 204;
  return r;
}

HttpApiReply route(ApiView& server, HttpService& http, const HttpRequest& req, uint64_t self_id) {
  std::string path;
  if (!http_percent_decode(req.path, path)) return error_reply(400, "bad percent-encoding");
  if (path.size() > 1 && path.back() == '/') path.pop_back();
  bool get = req.method == "GET" || req.method == "HEAD";
  auto only_get = [&]() {
    HttpApiReply r = error_reply(405, "use GET");
    r.headers = "Allow: GET, HEAD\r\n";
    return r;
  };
  if (path == "/metrics") {
    if (!get) return only_get();
    HttpApiReply r;
    r.content_type = "text/plain; version=0.0.4; charset=utf-8";
    r.body = metrics_text(server, http);
    return r;
  }
  constexpr std::string_view kClients = "/api/v1/clients/";
  constexpr std::string_view kStreams = "/api/v1/streams/";
  if (path.starts_with(kClients)) {
    if (req.method != "DELETE") {
      HttpApiReply r = error_reply(405, "use DELETE to close a client");
      r.headers = "Allow: DELETE\r\n";
      return r;
    }
    return delete_client(server, http, std::string_view(path).substr(kClients.size()), self_id);
  }
  if (path.starts_with(kStreams)) {
    if (!get) return only_get();
    std::string key = path.substr(kStreams.size());
    HttpApiReply r;
    if (!write_streams(server, http, &key, r.body)) return error_reply(404, "no such stream");
    return r;
  }
  // Probes: alive as long as this answers; ready while the server takes new clients (not
  // stopping) and, in a cluster, its registry answers (docs/cluster.md).
  if (path == "/healthz") return json_reply(200, json{{"status", "ok"}});
  if (path == "/readyz") {
    std::string why;
    if (server.stopping()) why = server.draining() ? "draining" : "stopping";
    if (why.empty() && server.cluster() != nullptr && !server.cluster()->client().connected()) {
      why = "the cluster registry is unreachable";
    }
    if (why.empty()) return json_reply(200, json{{"status", "ready"}});
    return json_reply(503, json{{"status", "not ready"}, {"reason", why}});
  }
  if (path == "/api/v1/cluster") {
    if (!get) return only_get();
    json view = cluster_view_json(server);
    if (view.is_null()) return error_reply(404, "this node is not in a cluster (docs/cluster.md)");
    return json_reply(200, view);
  }
  if (path == "/api/v1/history") return get ? history_api(server, req) : only_get();
  if (path == "/api/v1/alerts") {
    if (!get) return only_get();
    const AlertMonitor* alerts = server.stream_alerts();
    if (alerts == nullptr) return error_reply(404, "stream alerts are worker 0's");
    return json_reply(200, alerts->active_json(server.now_ms()));
  }
  if (path == "/api/v1/ingest") return get ? ingest_api(server) : only_get();
  if (path == "/api/v1/relays" || path.starts_with("/api/v1/relays/")) return relays_api(server, req, path);
  if (path == kConfigReloadPath) return config_reload_api(server, req);
  if (path == "/api/v1/recordings" || path.starts_with("/api/v1/recordings/"))
    return recordings_api(server, req.method, path);
  if (path == "/api/v1/server" || path == "/api/v1" || path == "/api/v1/streams" || path == "/api/v1/clients") {
    if (!get) return only_get();
    if (path == "/api/v1/streams") {
      HttpApiReply r;
      write_streams(server, http, nullptr, r.body);
      return r;
    }
    if (path == "/api/v1/clients") return json_reply(200, clients_json(server, http));
    return json_reply(200, server_json(server, http, merged_streams(server)));
  }
  return error_reply(404, "no such API resource (see docs/http.md)");
}

}  // namespace

HttpApiReply http_api_reply(ApiView& server, HttpService& http, const HttpRequest& req, uint64_t self_id) {
  // No exception may cross a libuv callback: anything the JSON library throws becomes a 500.
  try {
    return route(server, http, req, self_id);
  } catch (const std::exception& e) {
    return error_reply(500, e.what());
  }
}

json worker_snapshot(ApiView& server) {
  json streams = json::object();
  for (const auto& [key, e] : server.registry().entries()) streams[key] = worker_stream_json(key, e, server.now_ms());
  uint64_t in = 0, out = 0;
  for (RtmpConnection* c : server.connections()) {
    in += c->bytes_in();
    out += c->bytes_out();
  }
  json snap{{"worker", server.worker()},
            {"streams", streams},
            {"bytes_in", in},
            {"bytes_out", out},
            {"dropped_frames", server.registry().dropped_frames()},
            {"keyframe_requests", server.registry().keyframe_requests()},
            {"relays", server.relays().status()},
            {"write_hold_ms", server.write_hold_ms()},
            {"cluster", cluster_loop_json(server)}};
  if (const HttpService* http = server.http()) snap["http"] = http_loop_json(*http);
  if (SrtService* srt = server.srt()) snap["srt"] = srt_loop_json(*srt);
  return snap;
}

json worker_clients(ApiView& server) {
  auto publishing = publishing_keys(server);
  json clients = json::array();
  for (RtmpConnection* c : server.connections()) {
    if (!c->closing()) clients.push_back(rtmp_client_json(server, *c, publishing));
  }
  // This loop's HTTP connections are rows of /api/v1/clients like the RTMP ones.
  if (const HttpService* http = server.http()) add_http_clients(*http, server.now_ms(), server.worker(), clients);
  if (SrtService* srt = server.srt()) add_srt_clients(*srt, server.now_ms(), server.worker(), clients);
  return clients;
}

}  // namespace sluice::server
