// Runner: one libuv loop that creates the clients of a mode, starts them at the ramp-up rate,
// prints a progress line every second, stops everything at the end of the duration (or on
// SIGINT/SIGTERM) and produces the summary.
#pragma once

#include <sys/resource.h>
#include <uv.h>

#include <memory>
#include <vector>

#include "base/result.hpp"
#include "bench/load/client.hpp"
#include "bench/load/flv_file.hpp"
#include "bench/load/hls_latency.hpp"
#include "bench/load/latency_tracker.hpp"
#include "bench/load/options.hpp"
#include "bench/load/srt_client.hpp"
#include "bench/load/stats.hpp"
#include "bench/load/whep_context.hpp"

namespace sluice::bench {

class Runner {
 public:
  // `file` is needed by the publish and latency modes and may be null otherwise.
  Runner(const BenchOptions& options, std::unique_ptr<FlvFile> file);
  ~Runner();
  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;

  // Creates the clients (resolving URLs), then runs the loop to the end. Errors are set-up
  // errors (bad URL, unsupported mode); a run that happened always returns a summary.
  Result<Summary> run();
  // The clients' figures, for the JSON per-client list; valid after run().
  std::vector<const ClientStats*> client_stats();
  // SRT modes (srt-read, srt-publish, latency --publish srt://): libsrt's side of the run.
  const SrtContext* srt() const { return srt_.get(); }
  // whep: the players' shared figures.
  const WhepContext* whep() const { return whep_.get(); }

 private:
  Result<void> make_clients();
  Result<void> make_rtmp_clients();  // play, latency, publish
  Result<void> make_http_clients();  // HTTP-FLV, HLS
  Result<void> make_srt_clients();   // srt-read, srt-publish
  Result<void> make_whep_clients();
  Result<void> start_srt();  // the context, and the TS file of an SRT publisher
  void start_timers();
  void on_ramp();
  void on_tick();
  void on_progress();
  void stop();
  Summary summarize();

  static void on_timer(uv_timer_t* timer) noexcept;
  static void on_signal(uv_signal_t* signal, int signum) noexcept;

  const BenchOptions& options_;
  std::unique_ptr<FlvFile> file_;
  std::unique_ptr<TsFile> ts_file_;
  uv_loop_t loop_{};
  uv_timer_t ramp_timer_{};
  uv_timer_t tick_timer_{};
  uv_timer_t progress_timer_{};
  uv_timer_t end_timer_{};
  uv_signal_t sigint_{};
  uv_signal_t sigterm_{};
  // Latency mode, and hls with --publish: a publisher of this process starts first, the players
  // once it is live, and the players look up when it sent what they receive.
  bool lead_publisher() const;
  LatencyTracker tracker_;
  HlsLatency hls_latency_;
  std::vector<std::unique_ptr<Client>> players_;
  std::vector<std::unique_ptr<Client>> publishers_;
  // The clients close their sockets through it: ~Runner clears them first.
  std::unique_ptr<SrtContext> srt_;
  std::unique_ptr<WhepContext> whep_;  // outlives the clients, which record into it
  // Clients the ramp starts, in order; in latency mode the publisher starts at once instead.
  std::vector<Client*> ramp_;
  size_t ramped_ = 0;
  int64_t t0_ns_ = 0;       // run start
  int64_t ramp_t0_ns_ = 0;  // ramp start (later than t0 in latency mode)
  int64_t stop_ns_ = 0;
  bool stopped_ = false;
  bool timers_started_ = false;
  rusage usage_start_{};
  // Progress line state: what the previous line saw.
  int64_t last_progress_ns_ = 0;
  uint64_t last_bytes_ = 0;
  uint64_t last_parts_ = 0;
  double last_cpu_s_ = 0;
  size_t last_delay_index_ = 0;
  // Loop lag, measured by the tick timer against its own schedule.
  int64_t next_tick_due_ns_ = 0;
  int64_t lag_max_ns_ = 0;
  int64_t lag_max_interval_ns_ = 0;  // since the previous progress line
  uint64_t lag_over_50ms_ = 0;
};

}  // namespace sluice::bench
