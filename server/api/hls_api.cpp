#include "server/api/hls_api.hpp"

#include <cstdio>

#include "server/hls/hls_service.hpp"
#include "server/http/hls_sessions.hpp"
#include "server/http/service.hpp"
#include "server/api/api_view.hpp"
#include "config/config.hpp"

namespace sluice::server {

namespace {

using nlohmann::json;

const char* variant_name(const HlsSnapshot& s) {
  if (s.params.low_latency) return "low-latency";
  return s.params.container == media::hls::Container::MpegTs ? "mpegts" : "fmp4";
}

// What the snapshot keeps in memory: its segments (parts) and initialization segments.
uint64_t bytes_held(const HlsSnapshot& s) {
  uint64_t n = 0;
  for (const auto& seg : s.segments) n += seg.bytes;
  for (const auto& init : s.inits) n += init.bytes.size();
  return n;
}

json share_json(const HlsShare& share, size_t viewers) {
  json j{{"worker", share.worker()},
         {"viewers", viewers},
         {"requests", share.requests.load(std::memory_order_relaxed)},
         {"bytes_out", share.bytes_out.load(std::memory_order_relaxed)}};
  auto snap = share.snapshot();
  if (!snap) {
    j["ready"] = false;
    return j;
  }
  j["variant"] = variant_name(*snap);
  j["ready"] = snap->ready;
  j["live"] = snap->live;
  j["target_duration_s"] = snap->params.target_s;
  j["segments"] = snap->segments.size();
  j["media_sequence"] = snap->segments.empty() ? 0 : snap->segments.front().msn;
  j["discontinuity_sequence"] = snap->params.discontinuity_sequence;
  j["bytes_held"] = bytes_held(*snap);
  return j;
}

// What the stream's app offers (null: no HLS), so that a page shows "Play HLS" only where it plays.
json configured_variant(const config::Config& config, const std::string& key) {
  const config::AppConfig* app = config.find_app(key.substr(0, key.find('/')));
  if (!app || !app->hls.enabled) return nullptr;
  switch (app->hls.variant) {
    case config::HlsVariant::MpegTs: return "mpegts";
    case config::HlsVariant::Fmp4: return "fmp4";
    case config::HlsVariant::LowLatency: return "low-latency";
  }
  return nullptr;
}

}  // namespace

void add_hls_streams(ApiView& server, HttpService& http, std::map<std::string, json>& streams) {
  auto viewers = http.hls_sessions().viewers_by_stream();
  for (auto& [key, j] : streams) {
    j["hls_variant"] = configured_variant(server.config(), key);
    j["hls"] = nullptr;
  }
  for (const auto& share : server.hls().directory().all()) {
    auto it = streams.find(share->key());
    if (it == streams.end()) continue;
    auto v = viewers.find(share->key());
    it->second["hls"] = share_json(*share, v == viewers.end() ? 0 : v->second);
  }
}

json hls_server_json(ApiView& server, HttpService& http) {
  HlsDirectory& directory = server.hls().directory();
  const HlsDirectory::Totals t = directory.totals();
  uint64_t held = 0;
  auto shares = directory.all();
  for (const auto& share : shares)
    if (auto snap = share->snapshot()) held += bytes_held(*snap);
  return json{{"muxers", shares.size()}, {"viewers", http.hls_sessions().size()},
              {"requests", t.requests},  {"bytes_out", t.bytes_out},
              {"bytes_held", held},      {"muxers_started", t.muxers_started}};
}

void hls_metrics(ApiView& server, HttpService& http, std::string& m) {
  const json s = hls_server_json(server, http);
  char buf[64];
  auto series = [&](const char* name, const char* type, const char* help, double v) {
    std::snprintf(buf, sizeof buf, " %.15g\n", v);
    m += std::string("# HELP ") + name + ' ' + help + "\n# TYPE " + name + ' ' + type + '\n' + name + buf;
  };
  series("sluice_hls_muxers", "gauge", "HLS muxers running (streams being segmented).", s["muxers"].get<double>());
  series("sluice_hls_viewers", "gauge", "HLS viewers (admitted, asked something in the last 30 s).",
         s["viewers"].get<double>());
  series("sluice_hls_requests_total", "counter", "HLS playlist, segment, part and init requests answered.",
         s["requests"].get<double>());
  series("sluice_hls_bytes_total", "counter", "HLS playlist and media bytes sent.", s["bytes_out"].get<double>());
  series("sluice_hls_memory_bytes", "gauge", "Segments, parts and init segments the HLS muxers hold.",
         s["bytes_held"].get<double>());
  series("sluice_hls_muxers_started_total", "counter", "HLS muxers started since the server started.",
         s["muxers_started"].get<double>());
}

}  // namespace sluice::server
