// SRT callers for sluice-bench: `srt-read` (N readers in request mode), `srt-publish` (M publishers
// of an MPEG-TS file, paced in real time, looping) and the SRT publisher of `latency --publish
// srt://...` (RTMP players of what an SRT publisher sends: the delay through the server).
//
// libsrt runs threads of its own (per UDP socket a receiving and a sending thread, per receiving
// connection a TSBPD thread) and waits on its own epoll, which gives no descriptor libuv could
// watch. So, as in the server (server/srt/srt_poller.hpp), one thread of the bench waits in
// srt_epoll_uwait on every SRT socket of the run (edge-triggered) and hands what became readable,
// writable or broken to the loop through a uv_async; the loop then reads and sends itself
// (libsrt's calls are thread-safe). Every client's state lives on the loop, like the RTMP clients'.
//
// What a reader checks: the MPEG-TS sync byte every 188 bytes of every message, the PAT and PMT
// (to find the video PID), and on each video PES start its DTS and random_access_indicator: those
// drive the same PlaybackMonitor as an RTMP player's (TTFF to the first video PES, keyframe first,
// stalls of the media clock against the wall clock). Payloads are never kept.
//
// What a publisher sends: the file's 188-byte packets in messages of 7 (1316 bytes), each message
// when the file's clock says so (the PCR, interpolated between the packets that carry one). At
// the end it starts again with the PCR, PTS and DTS moved on by the file's length and the
// continuity counters continued, so the server sees one unbroken stream.
#pragma once

#include <srt/srt.h>
#include <sys/socket.h>
#include <uv.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "base/result.hpp"
#include "bench/load/client.hpp"
#include "bench/load/options.hpp"

namespace sluice::bench {

class LatencyTracker;

// srt://host:port?streamid=...[&latency=MS][&passphrase=...]: the stream id is percent-decoded
// (`%23!::r=live/cam,m=publish`, or the short forms `read:live/cam`, `publish:live/cam`). latency
// is in milliseconds, as srt-live-transmit reads it (ffmpeg's is in microseconds); without it the
// caller asks for --srt-latency. Resolved once (blocking getaddrinfo; before the loop runs).
struct SrtUrl {
  std::string text;
  std::string host;
  uint16_t port = 0;
  std::string stream_id;
  int32_t latency_ms = -1;  // -1: --srt-latency
  std::string passphrase;
  sockaddr_storage addr{};
};
Result<SrtUrl> parse_srt_url(std::string_view text);

// An MPEG-TS file loaded once, cut into messages, shared read-only by every publisher.
class TsFile {
 public:
  struct FrameKey {
    uint8_t type = 0;  // 8 audio, 9 video: the RTMP message type a player gets
    uint32_t timestamp = 0;
  };
  struct Message {
    uint32_t first_packet = 0;
    uint32_t packets = 0;
    int64_t due_us = 0;  // from the start of a loop: when its last packet is due
    // The frames whose last byte is in this message (latency mode), in frame_keys().
    uint32_t frames_begin = 0;
    uint32_t frames_end = 0;
  };

  // Reads and indexes the whole file (a whole number of 188-byte packets with their sync bytes)
  // and runs the server's own demuxer (media/ts) over it to know the frames and the timestamps a
  // player will get.
  static Result<TsFile> load(const std::string& path, size_t packets_per_message);

  const std::vector<Message>& messages() const { return messages_; }
  std::span<const FrameKey> frames(const Message& m) const {
    return {frame_keys_.data() + m.frames_begin, m.frames_end - m.frames_begin};
  }
  // One loop's length: the pacing period and the timestamp offset between loops, whole ms.
  uint32_t loop_ms() const { return loop_ms_; }
  uint64_t bytes() const { return bytes_.size(); }
  size_t pid_slots() const { return first_cc_.size(); }
  // Message `m` of loop number `loop` into `out`: PCR, PTS and DTS moved on by loop x loop_ms,
  // continuity counters continued from `cc` (one per PID slot, from initial_cc()).
  void render(const Message& m, uint32_t loop, std::vector<uint8_t>& out, std::vector<uint8_t>& cc) const;
  std::vector<uint8_t> initial_cc() const;
  // A frame is whole for the server only when the packet that ends its PES has come: for video,
  // whose PES has no length, the start of the next one. The wait between a frame's last byte and
  // that packet, in the file's pacing, ms (frames of loop 0 only).
  const std::vector<double>& pes_end_wait_ms() const { return pes_end_wait_ms_; }
  bool paced_by_pcr() const { return paced_by_pcr_; }

 private:
  struct PacketInfo {
    uint8_t slot = 0;          // the packet's PID, as an index into the counters
    uint8_t pts_offset = 0;    // 0: none
    uint8_t dts_offset = 0;    // 0: none
    bool has_payload = false;  // the continuity counter moves only on these
    bool has_pcr = false;      // at bytes 6..11
  };

  std::vector<uint8_t> bytes_;
  std::vector<PacketInfo> info_;
  std::vector<uint8_t> first_cc_;  // per slot: the file's first counter
  std::vector<Message> messages_;
  std::vector<FrameKey> frame_keys_;
  std::vector<double> pes_end_wait_ms_;
  uint32_t loop_ms_ = 0;
  bool paced_by_pcr_ = false;
};

// What an SrtContext dispatches readiness to.
class SrtEndpoint {
 public:
  virtual ~SrtEndpoint() = default;
  // SRT_EPOLL_IN, OUT, ERR, on the loop.
  virtual void on_srt_ready(int events) = 0;
};

// libsrt figures summed over the clients (srt_bstats when each closes).
struct SrtTotals {
  uint64_t packets_sent = 0;
  uint64_t packets_received = 0;
  uint64_t packets_retransmitted = 0;
  uint64_t packets_lost_send = 0;     // reported lost by the receiver (before retransmission)
  uint64_t packets_lost_receive = 0;  // gaps the receiver saw (before retransmission)
  uint64_t packets_dropped_send = 0;  // given up as too late by the sender
  uint64_t packets_dropped_receive = 0;
  uint64_t ts_sync_errors = 0;  // readers: messages whose 188-byte packets did not start with 0x47
  uint64_t video_pes = 0;       // readers: video PES starts seen
  double rtt_ms_max = 0;
};

// The run's libsrt: startup, the epoll and its thread, the shared local UDP ports, the figures.
class SrtContext {
 public:
  SrtContext(uv_loop_t* loop, const BenchOptions& options);
  ~SrtContext();
  SrtContext(const SrtContext&) = delete;
  SrtContext& operator=(const SrtContext&) = delete;

  Result<void> start();
  uv_loop_t* loop() const { return loop_; }
  // A new caller socket with the run's options (non-blocking, live, latency, stream id,
  // passphrase, payload size), bound to a shared local port when --srt-ports asks; registered
  // for `events` (edge-triggered) before the caller connects.
  Result<SRTSOCKET> open_caller(const SrtUrl& url, uint32_t index, SrtEndpoint* endpoint, int events);
  void watch(SRTSOCKET s, int events);
  // Records the socket's figures, forgets it and closes it.
  void close_socket(SRTSOCKET s);

  // End of the run, before the clients stop: the publishers stop sending, libsrt gets up to 3 s
  // to have the peer acknowledge what they sent, then the peer's latency passes so its receiver
  // hands the last packets to the server's application: the server's byte counts then match ours.
  class Drainable {
   public:
    virtual ~Drainable() = default;
    virtual void halt() = 0;                     // stop sending
    virtual SRTSOCKET drain_socket() const = 0;  // SRT_INVALID_SOCK: nothing to wait for
  };
  void add_drainable(Drainable* d) { drainables_.push_back(d); }
  void drain();
  // Ends the thread and closes the async (the loop must run once more).
  void close();

  void note_ttfb(int64_t ns);
  void note_video_pes() { ++totals_.video_pes; }
  void note_sync_error() { ++totals_.ts_sync_errors; }
  void note_read(size_t bytes) {
    ++reads_;
    read_bytes_ += bytes;
  }
  uint64_t reads() const { return reads_; }
  uint64_t read_bytes() const { return read_bytes_; }
  const SrtTotals& totals() const { return totals_; }
  const std::vector<double>& ttfb_ms() const { return ttfb_ms_; }
  double drain_ms() const { return drain_ms_; }
  // The TS file of srt-publish (or latency --publish): its wait for PES ends, for the summary.
  const TsFile* ts_file = nullptr;

 private:
  void run();
  static void on_async(uv_async_t* async);
  void record(SRTSOCKET s);

  uv_loop_t* loop_;
  const BenchOptions& options_;
  int eid_ = -1;
  bool started_ = false;
  bool async_open_ = false;
  uv_async_t async_{};
  std::atomic<bool> stopping_{false};
  std::thread thread_;
  std::mutex mutex_;
  std::vector<SRT_EPOLL_EVENT> pending_;  // filled by the thread
  std::vector<SRT_EPOLL_EVENT> taking_;   // the loop's batch
  std::unordered_map<SRTSOCKET, SrtEndpoint*> endpoints_;
  std::vector<uint16_t> ports_;  // --srt-ports: the local ports callers share (0: not bound yet)
  std::vector<Drainable*> drainables_;
  SrtTotals totals_;
  std::vector<double> ttfb_ms_;
  uint64_t reads_ = 0;
  uint64_t read_bytes_ = 0;
  double drain_ms_ = 0;
};

// N readers: connect in request mode, read, check.
std::unique_ptr<Client> make_srt_reader(SrtContext& ctx, SrtUrl url, const BenchOptions& options, ClientStats identity);
// A publisher of `file`; with a tracker, the send time of every frame's last byte is recorded.
std::unique_ptr<Client> make_srt_publisher(SrtContext& ctx, SrtUrl url, const BenchOptions& options, const TsFile& file,
                                           ClientStats identity, LatencyTracker* tracker);

// The SRT part of the summary (text after the common summary, and the JSON "srt" object).
void print_srt_summary(std::FILE* out, const SrtContext& ctx, Mode mode);
nlohmann::json srt_summary_json(const SrtContext& ctx);

}  // namespace sluice::bench
