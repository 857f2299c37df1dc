// Client: what the runner drives, whatever the protocol (RTMP player, RTMP publisher, HTTP-FLV
// player, HLS reader), plus the per-client figures it records.
#pragma once

#include <cstdint>
#include <string>

namespace sluice::bench {

enum class ClientRole : uint8_t { Player, Publisher };

struct ClientStats {
  ClientRole role = ClientRole::Player;
  uint32_t index = 0;
  uint32_t url_index = 0;
  int64_t started_ns = 0;  // when the TCP connect was issued (0: never started)
  uint64_t bytes_in = 0;
  uint64_t bytes_out = 0;
  uint64_t messages_in = 0;   // audio, video and data messages received
  uint64_t messages_out = 0;  // audio, video and data messages sent
  // TCP connect + handshake + connect + createStream: from start to play/publish sent; -1 until then.
  int64_t setup_ns = -1;
  // Time to first video picture from the moment play was sent; -1 until it arrives.
  int64_t ttff_ns = -1;
  bool first_frame_keyframe = false;
  // rtmps://: TCP connected -> TLS handshake done; -1 without TLS or before it is done.
  int64_t tls_handshake_ns = -1;
  uint32_t stalls = 0;
  uint32_t non_monotonic = 0;  // messages whose timestamp went back against the previous of their type
  uint32_t loops = 0;          // publisher: times the file was restarted
  uint64_t max_backlog = 0;    // publisher: largest unsent output seen, bytes
  int64_t max_late_ns = 0;     // publisher: worst lateness of a tag against its real-time slot
  // HLS readers (hls_client.hpp): messages_in counts the parts or segments received.
  uint64_t playlists = 0;       // playlist answers
  uint64_t http_errors = 0;     // answers other than 200, transport errors, timeouts
  uint32_t fell_behind = 0;     // times the next part was no longer listed (the reader jumped to the live edge)
  uint64_t parts_skipped = 0;   // parts (or segments) jumped over, as far as the playlist listed them
  uint32_t connects = 0;        // TCP connections opened (keep-alive: 1 when the server never closed one)
  std::string last_http_error;  // the reader's latest error, for the summary
  bool ok = false;              // player: media arrived; publisher: Publish.Start arrived
  bool ended = false;           // the server said the play ended (VOD end, StreamEOF, Play.Stop)
  bool failed = false;
  std::string fail_reason;
};

class Client {
 public:
  virtual ~Client() = default;
  // Starts connecting. Called once, by the ramp-up.
  virtual void start() = 0;
  // Periodic housekeeping (stall detection), a few times a second.
  virtual void tick(int64_t now_ns) = 0;
  // End of the run: records what is still pending (a player with no media yet has failed) and
  // closes the handles. The loop must then run until they are closed before destruction.
  virtual void stop() = 0;
  // Refreshes byte counters and returns the figures.
  virtual const ClientStats& stats() = 0;

 protected:
  // Records the first reason only: later ones are usually consequences of it.
  static void mark_failed(ClientStats& s, const std::string& reason) {
    if (s.failed) return;
    s.failed = true;
    s.fail_reason = reason;
  }
};

}  // namespace sluice::bench
