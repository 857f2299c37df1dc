// HlsClient: one HLS reader of a live media playlist, over one keep-alive HTTP/1.1 connection
// (HttpKeepAlive), requests one at a time.
//
// Low-latency mode (the playlist has EXT-X-PART-INF and CAN-BLOCK-RELOAD, and --hls-segments is
// off), as hls.js does with lowLatencyMode: fetch the playlist, start at its newest independent
// part, fetch the initialization segment once (again when EXT-X-MAP changes), then loop: fetch
// every listed part in order; when the next part is not listed yet, ask for the playlist that
// has it, `?_HLS_msn=M&_HLS_part=P` (blocking reload, with `_HLS_skip=YES` delta updates when
// the server offers them, unless --hls-no-skip), and go on.
//
// Segment mode (standard HLS: MPEG-TS or fMP4 segments, or any playlist with --hls-segments):
// start at the newest complete segment, reload the playlist as RFC 8216 6.3.4 says (a target
// duration after the start of the previous load when it changed, half of one when it did not)
// and fetch each new segment.
//
// Figures (ClientStats): bytes in/out at the socket; messages_in = parts or segments received;
// playlists, http_errors (status other than 200, transport errors, timeouts), fell_behind (the
// next part or segment was no longer listed, or gone: the reader jumped to the live edge) and
// parts_skipped (what it jumped over); TTFF = first playlist request sent -> first media
// received; stalls as for the other players (PlaybackMonitor fed with each part's media end
// time). Latency of media not in the first playlist goes to HlsLatency (hls_latency.hpp).
//
// Lifecycle: as HttpFlvClient: construct, start() once, stop(), run the loop dry, destroy.
#pragma once

#include <uv.h>

#include <cstdint>
#include <string>

#include "bench/load/client.hpp"
#include "bench/load/hls_latency.hpp"
#include "bench/load/hls_playlist.hpp"
#include "bench/load/http_keepalive.hpp"
#include "bench/load/http_url.hpp"
#include "bench/load/options.hpp"
#include "bench/load/playback_monitor.hpp"

namespace sluice::bench {

class LatencyTracker;

class HlsClient final : public Client, private HttpKeepAlive::Handler {
 public:
  HlsClient(uv_loop_t* loop, const HttpUrl& url, const BenchOptions& options, ClientStats identity,
            const LatencyTracker* tracker, HlsLatency* latency);
  HlsClient(const HlsClient&) = delete;
  HlsClient& operator=(const HlsClient&) = delete;

  void start() override;
  void tick(int64_t now_ns) override;
  void stop() override;
  const ClientStats& stats() override;
  // Whether a reader of this process read a playlist as low-latency (parts).
  static bool any_low_latency();

 private:
  enum class Want : uint8_t { Nothing, Playlist, Init, Media };
  // A position in the stream: part `part` of segment `msn` (segment mode: part is 0).
  struct Position {
    uint64_t msn = 0;
    uint32_t part = 0;
    auto operator<=>(const Position&) const = default;
  };
  // The media being fetched, with what its latency needs.
  struct Fetch {
    Position at;
    double duration_s = 0;
    int64_t pdt_ms = -1;  // the media's own date: segment PDT + earlier parts
    bool independent = false;
    bool live = false;  // not yet listed in the first playlist
    bool ts = false;    // MPEG-TS (else fMP4)
  };

  void on_response(HttpResponse& response) override;
  void on_http_error(const std::string& reason) override;
  void on_playlist(HttpResponse& response);
  void on_media(HttpResponse& response);
  // Decides the next request from the playlist held: init, a part or segment, or a reload.
  void step();
  bool step_parts();
  bool step_segments();
  void fetch(const std::string& uri, const PlaylistSegment& seg, uint32_t part_index);
  void reload(bool blocking);
  void jump_to_live_edge(bool behind);
  void error(const std::string& reason, uint64_t retry_ms);
  void fail(const std::string& reason);
  void schedule(uint64_t ms);
  static void on_timer(uv_timer_t* timer) noexcept;

  HttpUrl url_;
  const BenchOptions& options_;
  const LatencyTracker* tracker_;
  HlsLatency* latency_;
  HttpKeepAlive http_;
  uv_timer_t timer_{};
  PlaybackMonitor monitor_;
  ClientStats stats_;
  MediaPlaylist playlist_;
  bool have_playlist_ = false;
  bool low_latency_ = false;
  bool positioned_ = false;
  bool started_ = false;
  bool stopping_ = false;
  bool done_ = false;
  Position next_;       // what to fetch next
  Position live_from_;  // the end of the first playlist: media from here on counts for latency
  std::string init_loaded_;
  std::string init_pending_;
  bool reload_on_timer_ = false;  // the timer reloads the playlist (else it takes the next step)
  std::string last_error_;
  Want want_ = Want::Nothing;
  Fetch fetching_;
  int64_t last_reload_ns_ = 0;  // when the last playlist request went out (segment mode)
  uint64_t last_end_msn_ = 0;   // segment mode: to tell whether a reload changed anything
  bool reload_changed_ = true;  // segment mode: the last reload brought a new segment
  uint32_t consecutive_errors_ = 0;
  int64_t media_clock_ms_ = -1;  // the newest media end received (for stalls)
};

}  // namespace sluice::bench
