// PlayerClient: one RTMP player. connect -> createStream -> play (+ SetBufferLength), then it
// counts what arrives through a PlaybackMonitor and, in latency mode, reports each message's
// arrival to the LatencyTracker. Payloads are never copied or kept: the event (and its Slice)
// is dropped as soon as the monitor has looked at the first bytes.
#pragma once

#include <uv.h>

#include "bench/load/client.hpp"
#include "bench/load/options.hpp"
#include "bench/load/playback_monitor.hpp"
#include "bench/load/read_batching.hpp"
#include "bench/load/rtmp_connection.hpp"
#include "bench/load/rtmp_url.hpp"

namespace sluice::bench {

class LatencyTracker;

class PlayerClient final : public Client, private RtmpConnectionHandler {
 public:
  PlayerClient(uv_loop_t* loop, RtmpUrl url, const BenchOptions& options, ClientStats identity,
               LatencyTracker* tracker);

  void start() override;
  void tick(int64_t now_ns) override;
  void stop() override;
  const ClientStats& stats() override;

 private:
  enum class State : uint8_t { Idle, Connecting, CreatingStream, Playing, Done };

  void on_tcp_connected() override;
  void on_session_event(protocol::SessionEvent& event) override;
  void on_connection_closed(const std::string& reason) override;
  void on_media(protocol::Message& m);
  void fail(const std::string& reason);

  RtmpUrl url_;
  const BenchOptions& options_;
  LatencyTracker* tracker_;
  RtmpConnection conn_;
  PlaybackMonitor monitor_;
  ReadBatching batching_;
  ClientStats stats_;
  State state_ = State::Idle;
  uint32_t stream_id_ = 0;
  bool stopping_ = false;
};

}  // namespace sluice::bench
