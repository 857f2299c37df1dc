#include "bench/load/stats.hpp"

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

#include "bench/load/clock.hpp"
#include "bench/load/latency_tracker.hpp"

namespace sluice::bench {

namespace {

double seconds(const timeval& tv) { return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6; }

double mbps(uint64_t bytes, double elapsed_s) {
  return elapsed_s > 0 ? static_cast<double>(bytes) * 8 / 1e6 / elapsed_s : 0;
}

nlohmann::json distribution_json(const Distribution& d) {
  return {{"count", d.count}, {"p50", d.p50}, {"p90", d.p90}, {"p99", d.p99}, {"max", d.max}};
}

nlohmann::json tls_json(const RoleSummary& r) {
  if (r.tls_handshake_ms.count == 0) return nullptr;
  auto j = distribution_json(r.tls_handshake_ms);
  j["total_ms"] = r.tls_handshake_total_ms;
  return j;
}

nlohmann::json hls_role_json(const RoleSummary& r) {
  nlohmann::json errors = nlohmann::json::object();
  for (const auto& [reason, n] : r.last_http_errors) errors[reason] = n;
  return {{"last_http_errors", errors},
          {"playlists", r.playlists},
          {"http_errors", r.http_errors},
          {"fell_behind", r.fell_behind},
          {"clients_fell_behind", r.clients_fell_behind},
          {"parts_skipped", r.parts_skipped},
          {"connects", r.connects}};
}

nlohmann::json role_json(const RoleSummary& r, double elapsed_s) {
  nlohmann::json reasons = nlohmann::json::object();
  for (const auto& [reason, n] : r.failure_reasons) reasons[reason] = n;
  return {
      {"clients", r.clients},
      {"started", r.started},
      {"ok", r.ok},
      {"failed", r.failed},
      {"failure_reasons", reasons},
      {"bytes_in", r.bytes_in},
      {"bytes_out", r.bytes_out},
      {"mbps_in", mbps(r.bytes_in, elapsed_s)},
      {"mbps_out", mbps(r.bytes_out, elapsed_s)},
      {"messages_in", r.messages_in},
      {"messages_out", r.messages_out},
      {"setup_ms", distribution_json(r.setup_ms)},
      {"ttff_ms", distribution_json(r.ttff_ms)},
      {"tls_handshake_ms", tls_json(r)},
      {"keyframe_first", r.keyframe_first},
      {"stalls", r.stalls},
      {"clients_with_stalls", r.clients_with_stalls},
      {"non_monotonic", r.non_monotonic},
      {"clients_non_monotonic", r.clients_non_monotonic},
      {"ended_by_server", r.ended},
      {"loops", r.loops},
      {"max_backlog_bytes", r.max_backlog},
      {"max_send_late_ms", r.max_late_ms},
  };
}

nlohmann::json ms_or_null(int64_t ns) {
  return ns < 0 ? nlohmann::json(nullptr) : nlohmann::json(static_cast<double>(ns) / kNsPerMs);
}

// "p50=21.0 p90=... (n=500)", or "none" when nothing was measured.
std::string distribution_text(const Distribution& d, int decimals) {
  if (d.count == 0) return "none";
  char buf[160];
  std::snprintf(buf, sizeof buf, "p50=%.*f p90=%.*f p99=%.*f max=%.*f (n=%zu)", decimals, d.p50, decimals, d.p90,
                decimals, d.p99, decimals, d.max, d.count);
  return buf;
}

nlohmann::json client_json(const ClientStats& c) {
  return {
      {"index", c.index},
      {"role", c.role == ClientRole::Player ? "player" : "publisher"},
      {"url_index", c.url_index},
      {"ok", c.ok},
      {"failed", c.failed},
      {"fail_reason", c.fail_reason},
      {"bytes_in", c.bytes_in},
      {"bytes_out", c.bytes_out},
      {"messages_in", c.messages_in},
      {"messages_out", c.messages_out},
      {"setup_ms", ms_or_null(c.setup_ns)},
      {"ttff_ms", ms_or_null(c.ttff_ns)},
      {"tls_handshake_ms", ms_or_null(c.tls_handshake_ns)},
      {"first_frame_keyframe", c.first_frame_keyframe},
      {"stalls", c.stalls},
      {"non_monotonic", c.non_monotonic},
      {"ended_by_server", c.ended},
      {"playlists", c.playlists},
      {"http_errors", c.http_errors},
      {"fell_behind", c.fell_behind},
      {"parts_skipped", c.parts_skipped},
  };
}

// The bench's CPU per GB it received plus sent: what to compare with the server's own figure.
double cpu_per_gb(const Summary& s) {
  const uint64_t bytes = s.players.bytes_in + s.players.bytes_out + s.publishers.bytes_in + s.publishers.bytes_out;
  return bytes ? (s.cpu.user_s + s.cpu.sys_s) / (static_cast<double>(bytes) / 1e9) : 0;
}

void print_role(std::FILE* out, const char* name, const char* request, const RoleSummary& r, double elapsed_s) {
  std::fprintf(out, "%s: asked=%u started=%u ok=%u failed=%u\n", name, r.clients, r.started, r.ok, r.failed);
  for (const auto& [reason, n] : r.failure_reasons) std::fprintf(out, "  failed x%u: %s\n", n, reason.c_str());
  std::fprintf(out, "  received: %llu bytes, %.1f Mb/s, %llu messages\n", (unsigned long long)r.bytes_in,
               mbps(r.bytes_in, elapsed_s), (unsigned long long)r.messages_in);
  std::fprintf(out, "  sent: %llu bytes, %.1f Mb/s, %llu messages\n", (unsigned long long)r.bytes_out,
               mbps(r.bytes_out, elapsed_s), (unsigned long long)r.messages_out);
  std::fprintf(out, "  setup ms (connect -> %s sent): %s\n", request, distribution_text(r.setup_ms, 1).c_str());
  if (r.tls_handshake_ms.count)
    std::fprintf(out, "  tls handshake ms (TCP connected -> TLS done): %s; %.3f s in all\n",
                 distribution_text(r.tls_handshake_ms, 2).c_str(), r.tls_handshake_total_ms / 1000);
}

}  // namespace

Distribution distribution(std::vector<double>& v) {
  Distribution d;
  d.count = v.size();
  if (v.empty()) return d;
  std::sort(v.begin(), v.end());
  auto rank = [&](double p) {
    const auto i = static_cast<size_t>(std::ceil(p * static_cast<double>(v.size())));
    return v[std::clamp<size_t>(i, 1, v.size()) - 1];
  };
  d.p50 = rank(0.50);
  d.p90 = rank(0.90);
  d.p99 = rank(0.99);
  d.max = v.back();
  return d;
}

CpuUsage cpu_since(const rusage& start) {
  rusage now{};
  getrusage(RUSAGE_SELF, &now);
  CpuUsage c;
  c.user_s = seconds(now.ru_utime) - seconds(start.ru_utime);
  c.sys_s = seconds(now.ru_stime) - seconds(start.ru_stime);
  c.max_rss_kb = now.ru_maxrss;
  return c;
}

RoleSummary summarize_role(const std::vector<const ClientStats*>& clients, uint32_t asked) {
  RoleSummary r;
  r.clients = asked;
  std::vector<double> ttff, setup, tls;
  for (const ClientStats* c : clients) {
    if (c->started_ns != 0) ++r.started;
    if (c->ok && !c->failed) ++r.ok;
    if (c->failed) {
      ++r.failed;
      ++r.failure_reasons[c->fail_reason];
    }
    r.bytes_in += c->bytes_in;
    r.bytes_out += c->bytes_out;
    r.messages_in += c->messages_in;
    r.messages_out += c->messages_out;
    if (c->setup_ns >= 0) setup.push_back(static_cast<double>(c->setup_ns) / kNsPerMs);
    if (c->tls_handshake_ns >= 0) {
      tls.push_back(static_cast<double>(c->tls_handshake_ns) / kNsPerMs);
      r.tls_handshake_total_ms += tls.back();
    }
    if (c->ttff_ns >= 0) {
      ttff.push_back(static_cast<double>(c->ttff_ns) / kNsPerMs);
      if (c->first_frame_keyframe) ++r.keyframe_first;
    }
    r.stalls += c->stalls;
    if (c->stalls) ++r.clients_with_stalls;
    r.non_monotonic += c->non_monotonic;
    if (c->non_monotonic) ++r.clients_non_monotonic;
    if (c->ended) ++r.ended;
    r.loops += c->loops;
    r.max_backlog = std::max(r.max_backlog, c->max_backlog);
    r.max_late_ms = std::max(r.max_late_ms, static_cast<double>(c->max_late_ns) / kNsPerMs);
    r.playlists += c->playlists;
    r.http_errors += c->http_errors;
    r.fell_behind += c->fell_behind;
    r.clients_fell_behind += c->fell_behind ? 1 : 0;
    r.parts_skipped += c->parts_skipped;
    r.connects += c->connects;
    if (!c->last_http_error.empty()) ++r.last_http_errors[c->last_http_error];
  }
  r.ttff_ms = distribution(ttff);
  r.setup_ms = distribution(setup);
  r.tls_handshake_ms = distribution(tls);
  return r;
}

Distribution delay_distribution(const LatencyTracker& tracker) {
  std::vector<double> v(tracker.delays_ms().begin(), tracker.delays_ms().end());
  return distribution(v);
}

Distribution float_distribution(const std::vector<float>& values) {
  std::vector<double> v(values.begin(), values.end());
  return distribution(v);
}

namespace {

void print_hls(std::FILE* out, const Summary& s) {
  const RoleSummary& p = s.players;
  const char* unit = s.hls_low_latency ? "parts" : "segments";
  std::fprintf(out, "  hls: %llu %s, %llu playlists, http errors %llu, connections %llu\n",
               (unsigned long long)p.messages_in, unit, (unsigned long long)p.playlists,
               (unsigned long long)p.http_errors, (unsigned long long)p.connects);
  for (const auto& [reason, n] : p.last_http_errors)
    std::fprintf(out, "  readers whose latest error was (x%u): %s\n", n, reason.c_str());
  std::fprintf(out, "  fell behind: %u times (readers: %u), %s skipped: %llu\n", p.fell_behind, p.clients_fell_behind,
               unit, (unsigned long long)p.parts_skipped);
  if (s.hls_publish_ms.count || s.hls_unmatched)
    std::fprintf(out, "  latency ms (publisher sent the first sample -> reader has the %s): %s; unmatched: %llu\n",
                 s.hls_low_latency ? "part" : "segment", distribution_text(s.hls_publish_ms, 1).c_str(),
                 (unsigned long long)s.hls_unmatched);
  if (s.hls_pdt_ms.count)
    std::fprintf(out, "  latency ms by PROGRAM-DATE-TIME (wall clock now - date of the first sample): %s\n",
                 distribution_text(s.hls_pdt_ms, 1).c_str());
}

}  // namespace

void print_summary(std::FILE* out, const Summary& s) {
  std::fprintf(out, "sluice-bench %s: %.1f s (asked %.0f s)\n", mode_name(s.mode), s.elapsed_s, s.duration_s);
  for (size_t i = 0; i < s.urls.size(); ++i) std::fprintf(out, "  url[%zu]: %s\n", i, s.urls[i].c_str());
  if (!s.tls_negotiated.empty()) std::fprintf(out, "  tls: %s\n", s.tls_negotiated.c_str());
  if (s.publishers.clients) {
    print_role(out, "publishers", "publish", s.publishers, s.elapsed_s);
    std::fprintf(out, "  file loops: %u, largest unsent backlog: %llu bytes, worst send lateness: %.1f ms\n",
                 s.publishers.loops, (unsigned long long)s.publishers.max_backlog, s.publishers.max_late_ms);
  }
  if (s.players.clients) {
    const RoleSummary& p = s.players;
    const char* request = s.mode == Mode::HttpFlv || s.mode == Mode::Hls ? "GET"
                          : s.mode == Mode::Whep                         ? "offer"
                                                                         : "play";
    print_role(out, "players", request, p, s.elapsed_s);
    if (s.mode == Mode::Whep) {  // SRTP payloads are not decrypted: the picture type is unknown
      std::fprintf(out, "  ttff ms (offer sent -> end of the first video frame): %s\n",
                   distribution_text(p.ttff_ms, 1).c_str());
      std::fprintf(out, "  freezes: %u (players with freezes: %u)\n", p.stalls, p.clients_with_stalls);
    } else {
      std::fprintf(out, "  ttff ms (%s sent -> first picture): %s; first picture a keyframe: %u/%zu\n", request,
                   distribution_text(p.ttff_ms, 1).c_str(), p.keyframe_first, p.ttff_ms.count);
      std::fprintf(out, "  stalls: %u (players with stalls: %u)\n", p.stalls, p.clients_with_stalls);
    }
    std::fprintf(out, "  non-monotonic timestamps: %u (players: %u)\n", p.non_monotonic, p.clients_non_monotonic);
    if (p.ended) std::fprintf(out, "  plays ended by the server: %u\n", p.ended);
    if (s.mode == Mode::Hls) print_hls(out, s);
  }
  if (s.mode == Mode::Latency) {
    std::fprintf(out, "delay ms (publisher sent -> player received, per message): %s; unmatched: %llu\n",
                 distribution_text(s.delay_ms, 2).c_str(), (unsigned long long)s.delay_unmatched);
  }
  const double cpu = s.cpu.user_s + s.cpu.sys_s;
  std::fprintf(out, "bench cpu: %.2f s (user %.2f, sys %.2f) = %.0f%% of one core; max rss %ld KiB\n", cpu,
               s.cpu.user_s, s.cpu.sys_s, s.elapsed_s > 0 ? 100 * cpu / s.elapsed_s : 0, s.cpu.max_rss_kb);
  std::fprintf(out, "bench loop lag: max %.1f ms, ticks more than 50 ms late: %llu\n", s.loop_lag_max_ms,
               (unsigned long long)s.loop_lag_over_50ms);
  std::fprintf(out, "bench reads: %llu, %.1f KiB each on average; %.2f cpu-s per GB moved\n",
               (unsigned long long)s.reads,
               s.reads ? static_cast<double>(s.read_bytes) / 1024 / static_cast<double>(s.reads) : 0, cpu_per_gb(s));
}

nlohmann::json summary_json(const Summary& s, const std::vector<const ClientStats*>& clients, bool per_client) {
  const double cpu = s.cpu.user_s + s.cpu.sys_s;
  nlohmann::json j = {
      {"mode", mode_name(s.mode)},
      {"urls", s.urls},
      {"duration_s", s.duration_s},
      {"elapsed_s", s.elapsed_s},
      {"bench_cpu",
       {{"user_s", s.cpu.user_s},
        {"sys_s", s.cpu.sys_s},
        {"total_s", cpu},
        {"percent_of_one_core", s.elapsed_s > 0 ? 100 * cpu / s.elapsed_s : 0},
        {"max_rss_kb", s.cpu.max_rss_kb},
        {"loop_lag_max_ms", s.loop_lag_max_ms},
        {"loop_lag_over_50ms", s.loop_lag_over_50ms},
        {"reads", s.reads},
        {"read_bytes", s.read_bytes},
        {"cpu_s_per_gb_moved", cpu_per_gb(s)}}},
  };
  if (s.options) {
    const BenchOptions& o = *s.options;
    j["options"] = {{"clients", o.clients},
                    {"rate", o.rate},
                    {"chunk_size", o.chunk_size},
                    {"buffer_ms", o.buffer_ms},
                    {"start_s", o.start_s},
                    {"stall_ms", o.stall_ms},
                    {"read_batch_ms", o.read_batch_ms},
                    {"file", o.flv_file}};
    if (s.mode == Mode::HttpFlv) j["options"]["http_version"] = o.http10 ? "1.0" : "1.1";
    if (s.mode == Mode::Hls) {
      j["options"]["hls_segments"] = o.hls_segments;
      j["options"]["hls_no_skip"] = o.hls_no_skip;
      j["options"]["publish_url"] = o.publish_url;
    }
  }
  if (!s.tls_negotiated.empty()) j["tls"] = s.tls_negotiated;
  if (s.players.clients) j["players"] = role_json(s.players, s.elapsed_s);
  if (s.publishers.clients) j["publishers"] = role_json(s.publishers, s.elapsed_s);
  if (s.mode == Mode::Latency) {
    j["delay_ms"] = distribution_json(s.delay_ms);
    j["delay_ms"]["unmatched"] = s.delay_unmatched;
  }
  if (s.mode == Mode::Hls) {
    if (s.players.clients) j["players"]["hls"] = hls_role_json(s.players);
    j["hls_latency_ms"] = {{"publish", distribution_json(s.hls_publish_ms)},
                           {"pdt", distribution_json(s.hls_pdt_ms)},
                           {"unmatched", s.hls_unmatched},
                           {"unit", s.hls_low_latency ? "part" : "segment"}};
  }
  if (per_client) {
    nlohmann::json list = nlohmann::json::array();
    for (const ClientStats* c : clients) list.push_back(client_json(*c));
    j["clients"] = std::move(list);
  }
  return j;
}

}  // namespace sluice::bench
