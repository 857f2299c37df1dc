#include "server/api/history.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

namespace sluice::server {

using nlohmann::json;

HistoryRing::HistoryRing(size_t columns, size_t capacity)
    : columns_(columns), capacity_(capacity), t_(capacity), v_(capacity * columns, NAN) {}

void HistoryRing::push(int64_t unix_ms, std::span<const double> values) {
  t_[head_] = unix_ms;
  for (size_t c = 0; c < columns_; ++c) v_[head_ * columns_ + c] = c < values.size() ? values[c] : NAN;
  head_ = (head_ + 1) % capacity_;
  count_ = std::min(count_ + 1, capacity_);
}

namespace {

// Unsigned counters that only grow; one that went back (a reset) counts from zero.
uint64_t grown(uint64_t now, uint64_t before) { return now >= before ? now - before : now; }

// Values rounded to what a plot shows: JSON stays short.
double rounded(double v) {
  if (!std::isfinite(v)) return v;
  double a = std::fabs(v);
  double scale = a >= 1000 ? 1 : a >= 1 ? 1000 : 1e6;
  return std::round(v * scale) / scale;
}

json ring_json(const HistoryRing& ring, std::span<const char* const> columns) {
  json t = json::array();
  for (size_t i = 0; i < ring.size(); ++i) t.push_back(static_cast<double>(ring.time_ms(i)) / 1000);
  json series = json::object();
  for (size_t c = 0; c < columns.size(); ++c) {
    json values = json::array();
    for (size_t i = 0; i < ring.size(); ++i) {
      double v = ring.value(c, i);
      values.push_back(std::isfinite(v) ? json(rounded(v)) : json(nullptr));
    }
    series[columns[c]] = std::move(values);
  }
  return json{{"interval_s", ApiHistory::kIntervalMs / 1000.0},
              {"window_s", ApiHistory::kIntervalMs * ApiHistory::kPoints / 1000.0},
              {"t", std::move(t)},
              {"series", std::move(series)}};
}

}  // namespace

ApiHistory::ApiHistory() : server_(kServerColumns.size(), kPoints) {}

void ApiHistory::add(uint64_t mono_ms, const HistoryInput& in) {
  std::unordered_map<uint64_t, std::pair<uint64_t, uint64_t>> connections;
  connections.reserve(in.connections.size());
  uint64_t bytes_in = grown(in.http_bytes_in, last_http_in_), bytes_out = grown(in.http_bytes_out, last_http_out_);
  for (const HistoryInput::Connection& c : in.connections) {
    // A connection not seen at the last sample opened since: all its bytes are new.
    auto before = last_connections_.find(c.id);
    bool seen = before != last_connections_.end();
    bytes_in += grown(c.bytes_in, seen ? before->second.first : 0);
    bytes_out += grown(c.bytes_out, seen ? before->second.second : 0);
    connections.emplace(c.id, std::make_pair(c.bytes_in, c.bytes_out));
  }
  const bool first = !sampled_;
  const double dt = static_cast<double>(mono_ms - last_mono_ms_) / 1000;
  const double cpu = in.cpu_seconds - last_cpu_s_;
  sampled_ = true;
  last_mono_ms_ = mono_ms;
  last_cpu_s_ = in.cpu_seconds;
  last_http_in_ = in.http_bytes_in;
  last_http_out_ = in.http_bytes_out;
  last_connections_ = std::move(connections);
  if (first || dt <= 0) return;
  const double values[] = {static_cast<double>(bytes_in) / dt,
                           static_cast<double>(bytes_out) / dt,
                           in.players,
                           in.hls_viewers,
                           in.connections_rtmp,
                           in.connections_http,
                           in.connections_srt,
                           in.loop_lag_p99_s,
                           in.loop_lag_max_s,
                           std::max(0.0, cpu / dt),
                           in.rss_bytes};
  static_assert(std::size(values) == kServerColumns.size());
  server_.push(in.unix_ms, values);
  add_streams(in);
}

void ApiHistory::add_streams(const HistoryInput& in) {
  // A stream whose newest point left the window is forgotten.
  const int64_t oldest = in.unix_ms - static_cast<int64_t>(kIntervalMs * kPoints);
  std::erase_if(streams_, [&](const auto& s) { return s.second.time_ms(s.second.size() - 1) < oldest; });
  for (const auto& [key, s] : in.streams) {
    auto it = streams_.find(key);
    if (it == streams_.end()) {
      if (streams_.size() >= kMaxStreams) {
        // Full: a stream gone from the input (the one gone longest) makes room; else this one waits.
        auto gone = streams_.end();
        for (auto g = streams_.begin(); g != streams_.end(); ++g) {
          if (in.streams.contains(g->first)) continue;
          if (gone == streams_.end() ||
              g->second.time_ms(g->second.size() - 1) < gone->second.time_ms(gone->second.size() - 1))
            gone = g;
        }
        if (gone == streams_.end()) continue;
        streams_.erase(gone);
      }
      it = streams_.emplace(key, HistoryRing(kStreamColumns.size(), kPoints)).first;
    }
    const double values[] = {s.ingest_kbps, s.players, s.fps};
    it->second.push(in.unix_ms, values);
  }
}

json ApiHistory::server_json() const {
  json j = ring_json(server_, kServerColumns);
  json keys = json::array();
  for (const auto& [key, ring] : streams_) keys.push_back(key);
  j["streams"] = std::move(keys);  // those with a history (?stream=)
  return j;
}

json ApiHistory::stream_json(std::string_view key) const {
  auto it = streams_.find(key);
  if (it == streams_.end()) return nullptr;
  json j = ring_json(it->second, kStreamColumns);
  j["stream"] = key;
  return j;
}

}  // namespace sluice::server
