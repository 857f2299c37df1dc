// server/api/history.hpp: the ring keeps the last points oldest first and no more; the server's
// rates come from the counters' differences (connections that open, close or reset between two
// samples never make a rate negative); the streams tracked are bounded and forgotten once their
// last point leaves the window.
#include <doctest/doctest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "server/api/history.hpp"

using namespace sluice::server;
using nlohmann::json;

namespace {

constexpr int64_t kT0 = 1'700'000'000'000;

HistoryInput input(int64_t unix_ms) {
  HistoryInput in;
  in.unix_ms = unix_ms;
  return in;
}

const json& series(const json& j, const char* column) { return j.at("series").at(column); }

}  // namespace

TEST_CASE("the ring: oldest first, bounded, NaN for a missing column") {
  HistoryRing ring(2, 3);
  CHECK(ring.size() == 0);
  for (int i = 0; i < 5; ++i) {
    const double v[] = {double(i), double(10 * i)};
    ring.push(i * 1000, v);
  }
  REQUIRE(ring.size() == 3);
  for (size_t i = 0; i < 3; ++i) {
    CHECK(ring.time_ms(i) == int64_t(i + 2) * 1000);
    CHECK(ring.value(0, i) == double(i + 2));
    CHECK(ring.value(1, i) == double(10 * (i + 2)));
  }
  const double one[] = {7};
  ring.push(9000, one);
  CHECK(ring.time_ms(2) == 9000);
  CHECK(ring.value(0, 2) == 7);
  CHECK(std::isnan(ring.value(1, 2)));
}

TEST_CASE("server series: rates from counters, levels as given, at most kPoints") {
  ApiHistory h;
  CHECK(h.due(0));
  HistoryInput in = input(kT0);
  in.cpu_seconds = 10;
  in.http_bytes_in = 1000;
  in.http_bytes_out = 5000;
  in.connections = {{1, 100, 200}, {2, 1000, 0}};
  h.add(0, in);
  CHECK(!h.due(1000));
  CHECK(h.due(1800));  // a tick a little early
  // The first sample is the base of the rates: no point yet.
  CHECK(h.server_json().at("t").empty());

  in = input(kT0 + 2000);
  in.cpu_seconds = 11;  // half a core over 2 s
  in.rss_bytes = 123456789;
  in.http_bytes_in = 3000;   // +2000
  in.http_bytes_out = 9000;  // +4000
  // 1 grew by 400 in and 600 out; 2 closed; 3 opened (all its bytes are new).
  in.connections = {{1, 500, 800}, {3, 1600, 2400}};
  in.players = 3;
  in.connections_rtmp = 2;
  in.loop_lag_max_s = 0.0125;
  h.add(2000, in);
  json j = h.server_json();
  CHECK(j.at("interval_s") == 2.0);
  CHECK(j.at("window_s") == 600.0);
  REQUIRE(j.at("t").size() == 1);
  CHECK(j.at("t")[0].get<double>() == doctest::Approx((kT0 + 2000) / 1000.0));
  CHECK(series(j, "bytes_in_per_s")[0] == (2000 + 400 + 1600) / 2);
  CHECK(series(j, "bytes_out_per_s")[0] == (4000 + 600 + 2400) / 2);
  CHECK(series(j, "cpu_cores")[0] == 0.5);
  CHECK(series(j, "rss_bytes")[0] == 123456789.0);
  CHECK(series(j, "players")[0] == 3);
  CHECK(series(j, "connections_rtmp")[0] == 2);
  CHECK(series(j, "loop_lag_max_s")[0] == 0.0125);
  for (const char* column : ApiHistory::kServerColumns) CHECK(series(j, column).size() == 1);

  // A counter that went back (a connection id reused after a reset) counts from zero, never below.
  in = input(kT0 + 4000);
  in.cpu_seconds = 11;
  in.http_bytes_in = 3000;
  in.http_bytes_out = 9000;
  in.connections = {{1, 50, 80}};
  h.add(4000, in);
  j = h.server_json();
  CHECK(series(j, "bytes_in_per_s")[1] == 25);
  CHECK(series(j, "bytes_out_per_s")[1] == 40);
  CHECK(series(j, "cpu_cores")[1] == 0);

  for (int i = 3; i < 400; ++i) h.add(uint64_t(i) * 2000, input(kT0 + i * 2000));
  j = h.server_json();
  REQUIRE(j.at("t").size() == ApiHistory::kPoints);
  CHECK(j.at("t").back().get<double>() == doctest::Approx((kT0 + 399 * 2000) / 1000.0));
  CHECK(j.at("t").front().get<double>() == doctest::Approx((kT0 + 100 * 2000) / 1000.0));
}

TEST_CASE("stream series: per stream, fps null without video, bounded, forgotten after the window") {
  ApiHistory h;
  HistoryInput in = input(kT0);
  in.streams["live/a"] = {2500, 2, 25};
  in.streams["live/b"] = {64, 0, NAN};
  h.add(0, in);
  in.unix_ms = kT0 + 2000;
  h.add(2000, in);
  json a = h.stream_json("live/a");
  REQUIRE(a.is_object());
  CHECK(a.at("stream") == "live/a");
  CHECK(series(a, "ingest_kbps") == json::array({2500.0}));
  CHECK(series(a, "players") == json::array({2.0}));
  CHECK(series(a, "fps") == json::array({25.0}));
  CHECK(series(h.stream_json("live/b"), "fps") == json::array({nullptr}));
  CHECK(h.stream_json("live/none").is_null());
  CHECK(h.server_json().at("streams") == json::array({"live/a", "live/b"}));

  // Full: a new stream takes the place of one gone from the input, never of one still there.
  HistoryInput many = input(kT0 + 4000);
  for (size_t i = 0; i < ApiHistory::kMaxStreams + 20; ++i) many.streams["live/s" + std::to_string(i)] = {1, 1, 30};
  h.add(4000, many);
  CHECK(h.streams_tracked() == ApiHistory::kMaxStreams);
  CHECK(h.stream_json("live/a").is_null());
  CHECK(h.stream_json("live/b").is_null());
  // In name order: the first kMaxStreams names found room, the last 20 ("live/s81" to "live/s99") none.
  CHECK(h.stream_json("live/s0").is_object());
  CHECK(h.stream_json("live/s119").is_object());
  CHECK(h.stream_json("live/s80").is_object());
  CHECK(h.stream_json("live/s81").is_null());
  CHECK(h.stream_json("live/s99").is_null());

  // Gone from the input: kept while its last point is in the window, then forgotten.
  HistoryInput one = input(kT0 + 6000);
  one.streams["live/s1"] = {1, 1, 30};
  h.add(6000, one);
  CHECK(h.streams_tracked() == ApiHistory::kMaxStreams);
  CHECK(series(h.stream_json("live/s0"), "players").size() == 1);
  CHECK(series(h.stream_json("live/s1"), "players").size() == 2);
  one.unix_ms = kT0 + 4000 + int64_t(ApiHistory::kIntervalMs * ApiHistory::kPoints) + 1;
  h.add(8000, one);
  CHECK(h.streams_tracked() == 1);
  CHECK(h.stream_json("live/s1").is_object());
}
