// LivePlayer: one player of a live stream on a connection. The hub hands it frames; it queues them
// under the slow-player policy and, when the connection flushes, turns them into wire bytes: a
// per-player first chunk header plus the frame's shared pre-chunked body.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "media/stream_hub.hpp"
#include "media/subscriber_queue.hpp"
#include "protocol/chunk_writer.hpp"

namespace sluice::server {

class RtmpConnection;
class WriteBatch;

// Builds the frame's shared pre-chunked body for the server's media chunk stream and this chunk
// size, once; every RTMP player (and every worker) then sends the same bytes.
void prepare_wire_body(const media::Frame& f, uint32_t chunk_size);

class LivePlayer final : public media::Subscriber {
 public:
  LivePlayer(RtmpConnection& conn, uint32_t stream_id, std::string key, std::string name, media::StreamHub& hub);
  ~LivePlayer() override;
  LivePlayer(const LivePlayer&) = delete;
  LivePlayer& operator=(const LivePlayer&) = delete;

  void on_frame(const media::FramePtr& frame) override;
  void on_publish_start() override;
  void on_publish_end() override;

  void set_paused(bool paused, uint32_t position_ms);
  void set_receive(bool video, bool enabled);
  void set_buffer_length(uint32_t ms) { buffer_ms_ = ms; }

  // Moves queued frames into the batch, at most max_bytes; true when frames remain queued.
  bool fill(WriteBatch& batch, protocol::ChunkWriter& writer, size_t max_bytes);

  uint32_t stream_id() const { return stream_id_; }
  const std::string& name() const { return name_; }
  const std::string& key() const { return key_; }

 private:
  void append_frame(const media::Frame& f, WriteBatch& batch, protocol::ChunkWriter& writer);
  uint32_t output_timestamp(const media::Frame& f);

  RtmpConnection& conn_;
  uint32_t stream_id_;
  std::string key_;
  std::string name_;
  media::StreamHub& hub_;
  media::SubscriberQueue queue_;
  std::vector<media::FramePtr> scratch_;
  uint32_t buffer_ms_ = 0;
  bool paused_ = false;
  bool audio_ = true;
  bool video_ = true;
  bool subscribed_ = false;
  bool notified_unpublish_ = false;
  // Per-player timeline: when a publisher restarts at 0, this player's timestamps keep rising.
  bool rebase_next_ = false;
  bool sent_any_ = false;
  uint32_t offset_ = 0;
  uint32_t last_ts_ = 0;
};

}  // namespace sluice::server
