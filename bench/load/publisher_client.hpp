// PublisherClient: one RTMP publisher of an FLV file. connect -> createStream -> publish; on
// NetStream.Publish.Start it sends @setDataFrame onMetaData, then the file's audio/video tags
// paced in real time by their timestamps with a uv timer, looping with a timestamp offset that
// keeps growing so the stream never goes back in time.
//
// Pacing is against a fixed start instant on the monotonic clock, not "previous tag + delta", so
// timer lateness never accumulates into drift. All tags that are due go out as one write.
#pragma once

#include <uv.h>

#include <vector>

#include "bench/load/client.hpp"
#include "bench/load/flv_file.hpp"
#include "bench/load/options.hpp"
#include "bench/load/rtmp_connection.hpp"
#include "bench/load/rtmp_url.hpp"

namespace sluice::bench {

class LatencyTracker;

class PublisherClient final : public Client, private RtmpConnectionHandler {
 public:
  PublisherClient(uv_loop_t* loop, RtmpUrl url, const BenchOptions& options, const FlvFile& file, ClientStats identity,
                  LatencyTracker* tracker);

  void start() override;
  void tick(int64_t now_ns) override;
  void stop() override;
  const ClientStats& stats() override;

 private:
  enum class State : uint8_t { Idle, Connecting, CreatingStream, Publishing, Done };

  void on_tcp_connected() override;
  void on_session_event(protocol::SessionEvent& event) override;
  void on_connection_closed(const std::string& reason) override;
  void start_sending();
  void pump();
  void advance();
  void fail(const std::string& reason);
  static void on_timer(uv_timer_t* timer) noexcept;

  RtmpUrl url_;
  const FlvFile& file_;
  LatencyTracker* tracker_;
  RtmpConnection conn_;
  uv_timer_t timer_{};
  ClientStats stats_;
  State state_ = State::Idle;
  uint32_t stream_id_ = 0;
  int64_t t0_ns_ = 0;           // when media time 0 was sent
  int64_t loop_offset_ms_ = 0;  // added to the file's timestamps for the current loop
  size_t next_ = 0;             // next tag to send
  bool stopping_ = false;
};

}  // namespace sluice::bench
