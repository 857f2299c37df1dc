// RelaySink: a push target as a subscriber of the local stream's hub (server/live/live_subscriber.hpp):
// the players' bounded queue and drop rule, frames framed on the relay connection's chunk stream
// with the hub's timestamps, nothing before the first keyframe but metadata, sequence headers and
// audio, and the source's end as FCUnpublish + deleteStream behind the last frame.
#pragma once

#include <cstdint>
#include <string>

#include "server/live/live_subscriber.hpp"

namespace sluice::server {

class RelayClient;

class RelaySink final : public LiveSubscriber {
 public:
  RelaySink(RelayClient& client, StreamRegistry& registry, std::string key, media::StreamHub& hub,
            const config::PlayerQueueConfig& queue, uint32_t stream_id, std::string name);

  void on_publish_end() override { queue_notice(Notice::PublishEnd); }
  // The owner ends the push (source gone, target removed): the end goes out behind what is queued.
  void end() {
    unsubscribe();
    queue_notice(Notice::PublishEnd);
  }
  bool fill(WriteBatch& batch, size_t max_bytes) { return fill_frames(batch, max_bytes); }

 private:
  bool wants(const media::Frame& f) const override;
  bool started() const override { return sent_any_; }
  void append(const media::Frame& f, WriteBatch& batch) override;
  void append_notice(Notice n, WriteBatch& batch) override;

  RelayClient& client_;
  uint32_t stream_id_;
  std::string name_;
  mutable bool keyframe_seen_ = false;
  bool sent_any_ = false;
  bool ended_ = false;
};

}  // namespace sluice::server
