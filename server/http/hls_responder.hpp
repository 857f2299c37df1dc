// HlsResponder: GET/HEAD /{live-app}/{stream}/index.m3u8 and the segments, parts and
// initialization segments it lists, from the stream's HLS muxer (server/hls/), out of memory.
//
//   index.m3u8  the media playlist. The first request for a live stream starts its muxer (when
//               the app is on demand) and waits for the first part (low latency) or segment.
//               _HLS_msn / _HLS_part hold it until that part or segment exists (blocking
//               reload, RFC 8216bis 6.2.5.2), at most three target durations (then 503);
//               _HLS_skip=YES answers a delta update. Any other query parameters (a key, a
//               signature) are carried into every URI of the playlist.
//   seg<N>.ts|.m4s, part<N>.<I>.ts|.m4s, init<K>.mp4
//               the bytes, shared with every other reader (one scatter write of the muxer's
//               buffers, never copied), with Content-Length and single-range Range. The next
//               part (the playlist's preload hint) or the segment being written is held until
//               it is complete, like a blocking reload.
//
// Access: a viewer's first request is admitted by the access gate like an HTTP-FLV play;
// HlsSessions remembers it for the viewer's later requests.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/bytes.hpp"
#include "config/config.hpp"
#include "media/hls/playlist.hpp"
#include "server/hls/hls_service.hpp"
#include "server/hls/hls_share.hpp"
#include "server/http/responder.hpp"

namespace sluice::server {

class HttpConnection;

// The HLS resource a live app's path names: "cam/index.m3u8" -> stream "cam", file "index.m3u8".
// False when the path is not one (not the playlist nor a media name).
bool http_hls_target(std::string_view decoded, std::string& stream, std::string& file);
// The query a playlist carries into its URIs: the request's, without the _HLS_ parameters.
std::string hls_carried_query(std::string_view query);

class HlsResponder final : public HttpResponder, public HlsWaiter {
 public:
  explicit HlsResponder(HttpConnection& conn) : conn_(conn) {}
  ~HlsResponder() override;

  const char* activity() const override { return "hls"; }
  bool routine() const override { return true; }
  // The request is admitted (or was, as this viewer).
  void start(const config::AppConfig& app, std::string stream, std::string file);

  bool fill(WriteBatch& batch, size_t max_bytes) override;
  void on_tick(uint64_t now_ms) override;
  void close() override;
  void on_hls_update() override;

 private:
  enum class Want : uint8_t { Playlist, Media };
  // Answers from the share's latest snapshot, or waits for the next one.
  void answer();
  void answer_playlist(const HlsSnapshot& s);
  void answer_media(const std::shared_ptr<const HlsSnapshot>& s);
  void send_body(int status, std::string headers, std::vector<Slice> pieces, uint64_t length);
  void wait();
  void stop_waiting();
  void fail(int status, std::string_view message);

  HttpConnection& conn_;
  std::string key_;
  std::shared_ptr<HlsShare> share_;
  Want want_ = Want::Playlist;
  media::hls::MediaName media_;
  // Playlist: what a blocking request waits for (-1: nothing), the delta flag, the query kept.
  int64_t block_msn_ = -1;
  int64_t block_part_ = -1;
  bool skip_ = false;
  std::string query_;
  bool waiting_ = false;
  uint64_t seen_version_ = 0;
  uint64_t deadline_ms_ = 0;
  std::vector<Slice> body_;  // what fill() sends, in order
  size_t next_piece_ = 0;
  uint64_t body_bytes_ = 0;
};

}  // namespace sluice::server
