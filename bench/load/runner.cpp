#include "bench/load/runner.hpp"

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <map>
#include <utility>

#include "bench/load/clock.hpp"
#include "bench/load/hls_client.hpp"
#include "bench/load/http_keepalive.hpp"
#include "bench/load/http_flv_client.hpp"
#include "bench/load/http_url.hpp"
#include "bench/load/player_client.hpp"
#include "bench/load/publisher_client.hpp"
#include "bench/load/rtmp_connection.hpp"
#include "bench/load/rtmp_url.hpp"
#include "bench/load/srt_client.hpp"
#include "bench/load/whep_client.hpp"

namespace sluice::bench {

namespace {

// The ramp timer's period: fine enough that 1000 connections/s start in small even groups.
constexpr uint64_t kRampPeriodMs = 5;
// Stall detection granularity (well below the default 1 s threshold).
constexpr uint64_t kTickPeriodMs = 100;
constexpr uint64_t kProgressPeriodMs = 1000;

// What one progress line shows; the rates are over the last second.
struct ProgressSnapshot {
  long seconds = 0;
  size_t clients = 0;
  uint32_t ok = 0, failed = 0, stalls = 0, behind = 0;
  uint64_t parts = 0;  // hls: parts (segments) received in the last second
  double mbps = 0, cpu_percent = 0, lag_ms = 0;
  Distribution ttff;
  Distribution delay;      // latency mode
  bool publisher = false;  // a publisher leads the players (latency, hls --publish)
  bool publisher_live = false;
};

std::string progress_line(Mode mode, const ProgressSnapshot& p) {
  const bool players = mode != Mode::Publish && mode != Mode::SrtPublish;
  char buf[160];
  std::string line = "t=" + std::to_string(p.seconds) + "s ";
  if (p.publisher) line += p.publisher_live ? "publisher ok, " : "publisher not live, ";
  std::snprintf(buf, sizeof buf, "%s=%u/%zu ok, %.1f Mb/s%s", players ? "players" : "publishers", p.ok, p.clients,
                p.mbps, players ? "" : " out");
  line += buf;
  if (players) {
    std::snprintf(buf, sizeof buf, ", ttff p50=%.0fms", p.ttff.p50);
    line += p.ttff.count ? buf : ", ttff p50=-";
  }
  if (mode == Mode::Latency) {
    std::snprintf(buf, sizeof buf, ", delay p50=%.1fms p99=%.1fms", p.delay.p50, p.delay.p99);
    line += p.delay.count ? buf : ", delay -";
  }
  if (players) line += ", stalls=" + std::to_string(p.stalls);
  if (mode == Mode::Hls) line += ", parts/s=" + std::to_string(p.parts) + ", behind=" + std::to_string(p.behind);
  std::snprintf(buf, sizeof buf, ", failed=%u, cpu=%.0f%%, lag=%.0fms", p.failed, p.cpu_percent, p.lag_ms);
  return line + buf;
}

double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

}  // namespace

Runner::Runner(const BenchOptions& options, std::unique_ptr<FlvFile> file) : options_(options), file_(std::move(file)) {
  uv_loop_init(&loop_);
}

Runner::~Runner() {
  // Clients own handles: close them all and let the close callbacks run before freeing them.
  // After a normal run this is already done; after a set-up error (a bad URL halfway through
  // the list) the clients made so far still hold initialised handles.
  stop();
  uv_run(&loop_, UV_RUN_DEFAULT);
  players_.clear();
  publishers_.clear();
  uv_loop_close(&loop_);
}

bool Runner::lead_publisher() const {
  return options_.mode == Mode::Latency || (options_.mode == Mode::Hls && !options_.publish_url.empty());
}

namespace {
ClientStats identity(uint32_t index, uint32_t url_index) {
  ClientStats s;
  s.index = index;
  s.url_index = url_index;
  return s;
}
}  // namespace

Result<void> Runner::make_clients() {
  switch (options_.mode) {
    case Mode::Play:
    case Mode::Latency:
    case Mode::Publish: return make_rtmp_clients();
    case Mode::Hls:
    case Mode::HttpFlv: return make_http_clients();
    case Mode::SrtRead:
    case Mode::SrtPublish: return make_srt_clients();
    case Mode::Whep: return make_whep_clients();
  }
  return Error(Errc::Unsupported, "unknown mode");
}

Result<void> Runner::make_rtmp_clients() {
  // Each distinct URL is parsed and resolved once, whatever the number of clients using it.
  std::map<std::string, RtmpUrl> resolved;
  auto url_for = [&](uint32_t index, uint32_t& url_index) -> Result<RtmpUrl> {
    url_index = static_cast<uint32_t>(index % options_.urls.size());
    const std::string text = expand_index(options_.urls[url_index], index);
    if (auto it = resolved.find(text); it != resolved.end()) return it->second;
    auto parsed = parse_rtmp_url(text);
    if (!parsed) return parsed;
    resolved.emplace(text, *parsed);
    return parsed;
  };
  LatencyTracker* tracker = options_.mode == Mode::Latency ? &tracker_ : nullptr;
  if (options_.mode == Mode::Latency && !options_.publish_url.empty()) {
    // The publisher speaks SRT (an MPEG-TS file), the players RTMP.
    if (auto started = start_srt(); !started) return started;
    auto url = parse_srt_url(options_.publish_url);
    if (!url) return std::move(url).error();
    publishers_.push_back(make_srt_publisher(*srt_, std::move(*url), options_, *ts_file_, identity(0, 0), tracker));
  } else if (options_.mode == Mode::Latency) {
    uint32_t url_index = 0;
    auto url = url_for(0, url_index);
    if (!url) return std::move(url).error();
    publishers_.push_back(
        std::make_unique<PublisherClient>(&loop_, std::move(*url), options_, *file_, identity(0, url_index), tracker));
  }
  for (uint32_t i = 0; i < options_.clients; ++i) {
    uint32_t url_index = 0;
    auto url = url_for(i, url_index);
    if (!url) return std::move(url).error();
    if (options_.mode == Mode::Publish) {
      publishers_.push_back(std::make_unique<PublisherClient>(&loop_, std::move(*url), options_, *file_,
                                                              identity(i, url_index), nullptr));
      ramp_.push_back(publishers_.back().get());
    } else {
      players_.push_back(
          std::make_unique<PlayerClient>(&loop_, std::move(*url), options_, identity(i, url_index), tracker));
      ramp_.push_back(players_.back().get());
    }
  }
  return ok();
}

Result<void> Runner::make_http_clients() {
  if (lead_publisher()) {  // HLS with a publisher of its own, for the delay
    auto url = parse_rtmp_url(options_.publish_url);
    if (!url) return std::move(url).error();
    publishers_.push_back(
        std::make_unique<PublisherClient>(&loop_, std::move(*url), options_, *file_, identity(0, 0), &tracker_));
  }
  std::map<std::string, HttpUrl> resolved;
  for (uint32_t i = 0; i < options_.clients; ++i) {
    const auto url_index = static_cast<uint32_t>(i % options_.urls.size());
    const std::string text = expand_index(options_.urls[url_index], i);
    auto it = resolved.find(text);
    if (it == resolved.end()) {
      auto parsed = parse_http_url(text);
      if (!parsed) return std::move(parsed).error();
      it = resolved.emplace(text, std::move(*parsed)).first;
    }
    if (options_.mode == Mode::Hls) {
      players_.push_back(std::make_unique<HlsClient>(&loop_, it->second, options_, identity(i, url_index),
                                                     lead_publisher() ? &tracker_ : nullptr, &hls_latency_));
    } else {
      players_.push_back(std::make_unique<HttpFlvClient>(&loop_, it->second, options_, identity(i, url_index)));
    }
    ramp_.push_back(players_.back().get());
  }
  return ok();
}

Result<void> Runner::start_srt() {
  if (!options_.ts_file.empty()) {
    // 7 packets (1316 bytes) per message: what SRT encoders send and payload_size defaults to.
    auto loaded = TsFile::load(options_.ts_file, 7);
    if (!loaded) return std::move(loaded).error();
    ts_file_ = std::make_unique<TsFile>(std::move(*loaded));
  }
  srt_ = std::make_unique<SrtContext>(&loop_, options_);
  srt_->ts_file = ts_file_.get();
  return srt_->start();
}

Result<void> Runner::make_srt_clients() {
  if (auto started = start_srt(); !started) return started;
  std::map<std::string, SrtUrl> resolved;
  for (uint32_t i = 0; i < options_.clients; ++i) {
    const auto url_index = static_cast<uint32_t>(i % options_.urls.size());
    const std::string text = expand_index(options_.urls[url_index], i);
    auto it = resolved.find(text);
    if (it == resolved.end()) {
      auto parsed = parse_srt_url(text);
      if (!parsed) return std::move(parsed).error();
      it = resolved.emplace(text, std::move(*parsed)).first;
    }
    if (options_.mode == Mode::SrtPublish) {
      publishers_.push_back(
          make_srt_publisher(*srt_, it->second, options_, *ts_file_, identity(i, url_index), nullptr));
      ramp_.push_back(publishers_.back().get());
    } else {
      players_.push_back(make_srt_reader(*srt_, it->second, options_, identity(i, url_index)));
      ramp_.push_back(players_.back().get());
    }
  }
  return ok();
}

Result<void> Runner::make_whep_clients() {
  whep_ = std::make_unique<WhepContext>(options_);
  if (auto started = whep_->start(); !started) return started;
  std::map<std::string, HttpUrl> resolved;
  for (uint32_t i = 0; i < options_.clients; ++i) {
    const auto url_index = static_cast<uint32_t>(i % options_.urls.size());
    const std::string text = expand_index(options_.urls[url_index], i);
    auto it = resolved.find(text);
    if (it == resolved.end()) {
      auto parsed = parse_http_url(text);
      if (!parsed) return std::move(parsed).error();
      it = resolved.emplace(text, std::move(*parsed)).first;
    }
    players_.push_back(std::make_unique<WhepClient>(&loop_, it->second, *whep_, identity(i, url_index)));
    ramp_.push_back(players_.back().get());
  }
  return ok();
}

Result<Summary> Runner::run() {
  if (auto made = make_clients(); !made) return std::move(made).error();
  getrusage(RUSAGE_SELF, &usage_start_);
  last_cpu_s_ = cpu_seconds();
  t0_ns_ = now_ns();
  last_progress_ns_ = t0_ns_;
  if (lead_publisher()) {
    publishers_.front()->start();
  } else {
    ramp_t0_ns_ = t0_ns_;
  }
  start_timers();
  on_ramp();  // the first connections go out now, not one period later
  uv_run(&loop_, UV_RUN_DEFAULT);
  return summarize();
}

void Runner::start_timers() {
  timers_started_ = true;
  for (uv_timer_t* t : {&ramp_timer_, &tick_timer_, &progress_timer_, &end_timer_}) {
    uv_timer_init(&loop_, t);
    t->data = this;
  }
  uv_timer_start(&ramp_timer_, on_timer, kRampPeriodMs, kRampPeriodMs);
  uv_timer_start(&tick_timer_, on_timer, kTickPeriodMs, kTickPeriodMs);
  uv_timer_start(&progress_timer_, on_timer, kProgressPeriodMs, kProgressPeriodMs);
  uv_timer_start(&end_timer_, on_timer, static_cast<uint64_t>(options_.duration_s * 1000), 0);
  for (uv_signal_t* s : {&sigint_, &sigterm_}) {
    uv_signal_init(&loop_, s);
    s->data = this;
  }
  uv_signal_start(&sigint_, on_signal, SIGINT);
  uv_signal_start(&sigterm_, on_signal, SIGTERM);
}

void Runner::on_timer(uv_timer_t* timer) noexcept {
  auto* self = static_cast<Runner*>(timer->data);
  guarded("timer", [&] {
    if (self->stopped_) return;
    if (timer == &self->ramp_timer_) self->on_ramp();
    if (timer == &self->tick_timer_) self->on_tick();
    if (timer == &self->progress_timer_) self->on_progress();
    if (timer == &self->end_timer_) self->stop();
  });
}

void Runner::on_signal(uv_signal_t* signal, int) noexcept {
  auto* self = static_cast<Runner*>(signal->data);
  std::fprintf(stderr, "sluice-bench: interrupted, stopping\n");
  guarded("signal", [&] { self->stop(); });
}

void Runner::on_ramp() {
  const int64_t now = now_ns();
  if (ramp_t0_ns_ == 0) {
    // Latency mode: players start once the publisher is live, so their TTFF is the server's.
    if (!publishers_.front()->stats().ok) return;
    ramp_t0_ns_ = now;
  }
  size_t target = ramp_.size();
  if (options_.rate > 0) {
    const double elapsed_s = static_cast<double>(now - ramp_t0_ns_) / kNsPerSec;
    target = std::min(ramp_.size(), static_cast<size_t>(options_.rate * elapsed_s) + 1);
  }
  while (ramped_ < target) ramp_[ramped_++]->start();
  if (ramped_ == ramp_.size()) uv_timer_stop(&ramp_timer_);
}

void Runner::on_tick() {
  const int64_t now = now_ns();
  if (next_tick_due_ns_ != 0) {
    const int64_t lag = std::max<int64_t>(0, now - next_tick_due_ns_);
    lag_max_ns_ = std::max(lag_max_ns_, lag);
    lag_max_interval_ns_ = std::max(lag_max_interval_ns_, lag);
    if (lag > 50 * kNsPerMs) ++lag_over_50ms_;
  }
  // libuv schedules a repeating timer from when it last ran, so lateness does not accumulate.
  next_tick_due_ns_ = now + static_cast<int64_t>(kTickPeriodMs) * kNsPerMs;
  for (size_t i = 0; i < ramped_; ++i) ramp_[i]->tick(now);
}

void Runner::on_progress() {
  const int64_t now = now_ns();
  const bool players_mode = !players_.empty();
  auto& clients = players_mode ? players_ : publishers_;
  ProgressSnapshot p;
  p.clients = clients.size();
  uint64_t bytes = 0;
  std::vector<double> ttff;
  for (auto& c : clients) {
    const ClientStats& s = c->stats();
    p.ok += s.ok && !s.failed;
    p.failed += s.failed;
    p.stalls += s.stalls;
    p.behind += s.fell_behind;
    p.parts += s.messages_in;
    bytes += players_mode ? s.bytes_in : s.bytes_out;
    if (s.ttff_ns >= 0) ttff.push_back(static_cast<double>(s.ttff_ns) / kNsPerMs);
  }
  p.ttff = distribution(ttff);
  const double interval_s = static_cast<double>(now - last_progress_ns_) / kNsPerSec;
  const double cpu = cpu_seconds();
  if (interval_s > 0) {
    p.mbps = static_cast<double>(bytes - last_bytes_) * 8 / 1e6 / interval_s;
    p.cpu_percent = 100 * (cpu - last_cpu_s_) / interval_s;
  }
  p.seconds = std::lround(static_cast<double>(now - t0_ns_) / kNsPerSec);
  p.lag_ms = static_cast<double>(lag_max_interval_ns_) / kNsPerMs;
  last_progress_ns_ = now;
  last_bytes_ = bytes;
  p.parts -= std::exchange(last_parts_, p.parts);
  last_cpu_s_ = cpu;
  lag_max_interval_ns_ = 0;
  if (lead_publisher()) {
    p.publisher = true;
    p.publisher_live = publishers_.front()->stats().ok;
    tracker_.prune(now);
  }
  if (options_.mode == Mode::Latency) {
    // Only the delays of the last second: the progress line shows the current state.
    const auto& all = tracker_.delays_ms();
    std::vector<double> recent(all.begin() + static_cast<std::ptrdiff_t>(last_delay_index_), all.end());
    last_delay_index_ = all.size();
    p.delay = distribution(recent);
  }
  if (!options_.quiet) std::fprintf(stderr, "%s\n", progress_line(options_.mode, p).c_str());
}

void Runner::stop() {
  if (stopped_) return;
  stopped_ = true;
  stop_ns_ = now_ns();
  if (timers_started_) {
    for (uv_timer_t* t : {&ramp_timer_, &tick_timer_, &progress_timer_, &end_timer_})
      uv_close(reinterpret_cast<uv_handle_t*>(t), nullptr);
    for (uv_signal_t* s : {&sigint_, &sigterm_}) uv_close(reinterpret_cast<uv_handle_t*>(s), nullptr);
  }
  // SRT publishers first stop sending and wait until the server has what they sent.
  if (srt_) srt_->drain();
  // Clients never started get stop() too: they count as failed and their handles get closed.
  for (auto& c : publishers_) c->stop();
  for (auto& c : players_) c->stop();
  if (srt_) srt_->close();
}

std::vector<const ClientStats*> Runner::client_stats() {
  std::vector<const ClientStats*> out;
  for (auto& c : publishers_) out.push_back(&c->stats());
  for (auto& c : players_) out.push_back(&c->stats());
  return out;
}

Summary Runner::summarize() {
  Summary s;
  s.mode = options_.mode;
  s.urls = options_.urls;
  s.options = &options_;
  s.duration_s = options_.duration_s;
  s.elapsed_s = static_cast<double>(stop_ns_ - t0_ns_) / kNsPerSec;
  s.cpu = cpu_since(usage_start_);
  s.loop_lag_max_ms = static_cast<double>(lag_max_ns_) / kNsPerMs;
  s.loop_lag_over_50ms = lag_over_50ms_;
  s.reads = RtmpConnection::total_reads() + HttpFlvClient::total_reads() + HttpKeepAlive::total_reads();
  s.read_bytes =
      RtmpConnection::total_read_bytes() + HttpFlvClient::total_read_bytes() + HttpKeepAlive::total_read_bytes();
  if (srt_) {
    s.reads += srt_->reads();
    s.read_bytes += srt_->read_bytes();
  }
  if (whep_) {  // a datagram is a read here (recvmmsg takes several per call)
    s.reads += whep_->totals().datagrams;
    for (auto& c : players_) s.read_bytes += c->stats().bytes_in;
  }
  s.tls_negotiated = RtmpConnection::tls_negotiated();
  auto collect = [](std::vector<std::unique_ptr<Client>>& clients) {
    std::vector<const ClientStats*> out;
    for (auto& c : clients) out.push_back(&c->stats());
    return out;
  };
  s.players = summarize_role(collect(players_), static_cast<uint32_t>(players_.size()));
  s.publishers = summarize_role(collect(publishers_), static_cast<uint32_t>(publishers_.size()));
  if (options_.mode == Mode::Latency) {
    s.delay_ms = delay_distribution(tracker_);
    s.delay_unmatched = tracker_.unmatched();
  }
  if (options_.mode == Mode::Hls) {
    s.hls_low_latency = HlsClient::any_low_latency();
    s.hls_publish_ms = float_distribution(hls_latency_.publish_ms);
    s.hls_pdt_ms = float_distribution(hls_latency_.pdt_ms);
    s.hls_unmatched = hls_latency_.unmatched;
  }
  return s;
}

}  // namespace sluice::bench
