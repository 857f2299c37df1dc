// LivePlayer: one RTMP player of a live stream on a connection. A LiveSubscriber (queue, slow-
// player policy, fill loop: server/live/live_subscriber.hpp) whose frames go out as a per-player
// first chunk header plus the frame's shared pre-chunked body (server/live/wire_body.hpp), on a
// per-player timeline that keeps rising when the publisher restarts. UnpublishNotify/StreamEOF and
// StreamBegin/PublishNotify are notices (live_subscriber.hpp): they follow the frames queued
// before them on the wire.
#pragma once

#include <cstdint>
#include <string>

#include "server/access/access_ticket.hpp"
#include "server/live/live_subscriber.hpp"

namespace sluice::server {

class RtmpConnection;

class LivePlayer final : public LiveSubscriber {
 public:
  LivePlayer(RtmpConnection& conn, uint32_t stream_id, std::string key, std::string name, media::StreamHub& hub);

  void on_publish_start() override;
  void on_publish_end() override;

  void set_paused(bool paused, uint32_t position_ms);
  void set_receive(bool video, bool enabled);
  void set_buffer_length(uint32_t ms) { buffer_ms_ = ms; }
  // Server shutdown: receives nothing more; what is queued (frames, notices) still goes out.
  void end() { unsubscribe(); }

  // Moves queued frames into the batch, at most max_bytes; true when frames remain queued.
  bool fill(WriteBatch& batch, size_t max_bytes) { return fill_frames(batch, max_bytes); }

  uint32_t stream_id() const { return stream_id_; }
  const std::string& name() const { return name_; }

  // Its seat in the app's limits and its done hook (server/access/access_ticket.hpp).
  AccessTicket ticket;

 private:
  bool wants(const media::Frame& f) const override;
  bool started() const override { return sent_any_; }
  void append(const media::Frame& f, WriteBatch& batch) override;
  void append_notice(Notice n, WriteBatch& batch) override;
  uint32_t output_timestamp(const media::Frame& f);

  RtmpConnection& conn_;
  uint32_t stream_id_;
  std::string name_;
  uint32_t buffer_ms_ = 0;
  bool paused_ = false;
  bool audio_ = true;
  bool video_ = true;
  bool notified_unpublish_ = false;
  // Per-player timeline: when a publisher restarts at 0, this player's timestamps keep rising.
  bool rebase_next_ = false;
  bool sent_any_ = false;
  uint32_t offset_ = 0;
  uint32_t last_ts_ = 0;
};

}  // namespace sluice::server
