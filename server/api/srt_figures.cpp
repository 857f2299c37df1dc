#include "server/api/srt_figures.hpp"

#include <srt/srt.h>

#include "server/api/api_view.hpp"
#include "server/live/worker_mesh.hpp"
#include "server/srt/srt_connection.hpp"
#include "server/srt/srt_service.hpp"

namespace sluice::server {

using nlohmann::json;

namespace {

// Cumulative figures since the connection began (srt_bstats without clearing them).
bool stats_of(const SrtConnection& c, SRT_TRACEBSTATS& perf) { return srt_bstats(c.socket(), &perf, 0) == 0; }

uint64_t count(int64_t v) { return v > 0 ? static_cast<uint64_t>(v) : 0; }

}  // namespace

SrtTotals srt_loop_totals(SrtService* srt) {
  SrtTotals t;
  if (srt == nullptr) return t;
  for (const auto& [s, c] : srt->connections()) {
    ++t.connections;
    if (c->publishing()) ++t.publishers;
    if (c->reading()) ++t.readers;
    t.bytes_in += c->bytes_in();
    t.bytes_out += c->bytes_out();
    SRT_TRACEBSTATS perf{};
    if (!stats_of(*c, perf)) continue;
    t.packets_lost += count(perf.pktRcvLossTotal);
    t.packets_retransmitted += count(perf.pktRetransTotal) + count(perf.pktRcvRetrans);
    t.packets_dropped += count(perf.pktRcvDropTotal) + count(perf.pktSndDropTotal);
  }
  return t;
}

json srt_totals_json(const SrtTotals& t) {
  return json{{"connections", t.connections},
              {"publishers", t.publishers},
              {"readers", t.readers},
              {"bytes_in", t.bytes_in},
              {"bytes_out", t.bytes_out},
              {"packets_lost", t.packets_lost},
              {"packets_retransmitted", t.packets_retransmitted},
              {"packets_dropped", t.packets_dropped}};
}

json srt_loop_json(SrtService& srt) { return srt_totals_json(srt_loop_totals(&srt)); }

SrtTotals srt_totals(ApiView& server) {
  SrtTotals t = srt_loop_totals(server.srt());
  WorkerMesh* mesh = server.mesh();
  if (mesh == nullptr) return t;
  for (const auto& shared : mesh->snapshots(server.worker())) {
    auto s = shared->find("srt");
    if (s == shared->end()) continue;
    t.connections += s->value("connections", size_t{0});
    t.publishers += s->value("publishers", size_t{0});
    t.readers += s->value("readers", size_t{0});
    t.bytes_in += s->value("bytes_in", uint64_t{0});
    t.bytes_out += s->value("bytes_out", uint64_t{0});
    t.packets_lost += s->value("packets_lost", uint64_t{0});
    t.packets_retransmitted += s->value("packets_retransmitted", uint64_t{0});
    t.packets_dropped += s->value("packets_dropped", uint64_t{0});
  }
  return t;
}

void add_srt_clients(SrtService& srt, uint64_t now_ms, uint32_t worker, json& rows) {
  for (const auto& [s, c] : srt.connections()) {
    if (c->closed()) continue;
    const bool admitted = !c->key().empty();
    json j{{"id", c->id()},
           {"protocol", "srt"},
           {"address", c->peer()},
           {"app", c->stream_id().app},
           {"worker", worker},
           {"mode", c->stream_id().mode == protocol::SrtStreamId::Mode::Publish ? "publish" : "request"},
           {"publishing", c->publishing() && admitted ? json::array({c->key()}) : json::array()},
           {"playing", c->reading() && admitted ? json::array({c->key()}) : json::array()},
           {"bytes_in", c->bytes_in()},
           {"bytes_out", c->bytes_out()},
           {"duration_s", static_cast<double>(now_ms - c->started_ms()) / 1000.0}};
    SRT_TRACEBSTATS perf{};
    if (stats_of(*c, perf)) {
      j["srt"] = json{{"rtt_ms", perf.msRTT},
                      {"bandwidth_mbps", perf.mbpsBandwidth},
                      {"send_rate_mbps", perf.mbpsSendRate},
                      {"receive_rate_mbps", perf.mbpsRecvRate},
                      {"packets_received", count(perf.pktRecvTotal)},
                      {"packets_sent", count(perf.pktSentTotal)},
                      {"packets_lost", count(perf.pktRcvLossTotal)},
                      {"packets_send_lost", count(perf.pktSndLossTotal)},
                      {"packets_retransmitted", count(perf.pktRetransTotal) + count(perf.pktRcvRetrans)},
                      {"packets_dropped", count(perf.pktRcvDropTotal) + count(perf.pktSndDropTotal)},
                      {"receive_buffer_ms", perf.msRcvBuf},
                      {"receive_buffer_bytes", perf.byteRcvBuf},
                      {"send_buffer_ms", perf.msSndBuf},
                      {"latency_ms", perf.msRcvTsbPdDelay}};
    }
    const media::ts::TsDemuxer::Stats d = c->demuxer().stats();
    if (c->publishing()) {
      j["mpegts"] = json{{"packets", d.packets},
                         {"continuity_errors", d.continuity_errors},
                         {"damaged_packets", d.damaged_packets},
                         {"bad_pes", d.bad_pes},
                         {"dropped_frames", d.dropped_frames}};
    }
    if (c->reading()) j["dropped_frames"] = c->dropped_frames();
    rows.push_back(std::move(j));
  }
}

}  // namespace sluice::server
