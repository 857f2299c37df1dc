// ApiHistory: the last minutes of the server's figures and of each stream's, for the built-in
// page's plots (GET /api/v1/history, docs/http.md). Sans-I/O: worker 0 gathers a HistoryInput
// every kIntervalMs (history_sampler.cpp) and this turns its counters into rates and keeps
// kPoints of each series in fixed rings, so memory is bounded: kPoints values per series, at
// most kMaxStreams streams.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

namespace sluice::server {

// Points in time and, per point, one value per column (NaN: not known then, written as null).
class HistoryRing {
 public:
  HistoryRing(size_t columns, size_t capacity);
  void push(int64_t unix_ms, std::span<const double> values);
  size_t size() const { return count_; }
  // Oldest first: i in [0, size()).
  int64_t time_ms(size_t i) const { return t_[slot(i)]; }
  double value(size_t column, size_t i) const { return v_[slot(i) * columns_ + column]; }

 private:
  size_t slot(size_t i) const { return (head_ + capacity_ - count_ + i) % capacity_; }
  size_t columns_, capacity_;
  size_t head_ = 0;  // where the next point goes
  size_t count_ = 0;
  std::vector<int64_t> t_;
  std::vector<double> v_;
};

// What one sample is made of: counters (rates come from their differences) and levels.
struct HistoryInput {
  struct Stream {
    double ingest_kbps = 0;
    double players = 0;
    double fps = NAN;  // none without video from a publisher
  };
  struct Connection {
    uint64_t id = 0;
    uint64_t bytes_in = 0;
    uint64_t bytes_out = 0;
  };
  int64_t unix_ms = 0;
  double cpu_seconds = 0;  // the process's user and system time, ever
  double rss_bytes = 0;
  uint64_t http_bytes_in = 0;  // closed and open HTTP connections, ever
  uint64_t http_bytes_out = 0;
  std::vector<Connection> connections;  // the open RTMP and SRT ones (their counts end with them)
  double players = 0;                   // of every stream (RTMP, HTTP-FLV, SRT, WebRTC)
  double hls_viewers = 0;
  double connections_rtmp = 0, connections_http = 0, connections_srt = 0;
  double loop_lag_p99_s = 0, loop_lag_max_s = 0;  // loop 0's, over the last minute
  std::map<std::string, Stream, std::less<>> streams;
};

class ApiHistory {
 public:
  static constexpr uint64_t kIntervalMs = 2000;
  static constexpr size_t kPoints = 300;  // 10 minutes
  static constexpr size_t kMaxStreams = 100;
  static constexpr std::array<const char*, 11> kServerColumns = {
      "bytes_in_per_s",  "bytes_out_per_s", "players",        "hls_viewers", "connections_rtmp", "connections_http",
      "connections_srt", "loop_lag_p99_s",  "loop_lag_max_s", "cpu_cores",   "rss_bytes"};
  static constexpr std::array<const char*, 3> kStreamColumns = {"ingest_kbps", "players", "fps"};

  ApiHistory();

  // Whether a sample is due at `mono_ms` (the loop's clock); the caller then gathers one.
  bool due(uint64_t mono_ms) const { return !sampled_ || mono_ms - last_mono_ms_ + kSlackMs >= kIntervalMs; }
  // The first sample only sets the counters' base: rates need two.
  void add(uint64_t mono_ms, const HistoryInput& in);

  // {"interval_s", "window_s", "t": [unix s], "series": {column: [values]}}; a stream's adds
  // "stream"; nullptr for a stream not tracked.
  nlohmann::json server_json() const;
  nlohmann::json stream_json(std::string_view key) const;
  size_t streams_tracked() const { return streams_.size(); }

 private:
  static constexpr uint64_t kSlackMs = 200;  // a tick a little early still counts
  void add_streams(const HistoryInput& in);

  HistoryRing server_;
  std::map<std::string, HistoryRing, std::less<>> streams_;
  bool sampled_ = false;
  uint64_t last_mono_ms_ = 0;
  double last_cpu_s_ = 0;
  uint64_t last_http_in_ = 0, last_http_out_ = 0;
  std::unordered_map<uint64_t, std::pair<uint64_t, uint64_t>> last_connections_;
};

}  // namespace sluice::server
