// HttpFlvPlayer: one HTTP-FLV reader of a live stream (GET /{app}/{stream}.flv). A LiveSubscriber
// like the RTMP LivePlayer (server/live/live_subscriber.hpp: bounded queue, the same slow-reader
// policy, config.rtmp.player_queue). When its connection flushes it turns queued frames into FLV
// tags: an 11-byte tag header built for this reader, the frame's shared payload by reference (never
// copied), and the 4-byte PreviousTagSize; with chunked transfer coding each tag is one chunk, and
// the chunk framing shares the iovec of the tag's small bytes, so a tag costs two iovecs.
//
// Lifecycle:
//  1. Created after the response head is queued; subscribing replays metadata, sequence headers
//     and the GOP cache, so the reader starts on a key frame.
//  2. The FLV file header goes out with the first tags; its audio/video flags come from what the
//     stream carries then (both when nothing is known yet).
//  3. When the publisher leaves, the reader stops receiving, drains its queue and fill() returns
//     Ended: its FlvResponder (flv_responder.hpp) writes the last chunk (or the connection closes
//     a close-delimited response).
//  4. Destroying it unsubscribes it (never from inside a hub callback: the responder destroys it
//     from its fill or close).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "server/live/live_subscriber.hpp"

namespace sluice::server {

class StreamSocket;

class HttpFlvPlayer final : public LiveSubscriber {
 public:
  enum class Fill { Idle, More, Ended };

  HttpFlvPlayer(StreamSocket& socket, StreamRegistry& registry, std::string key, media::StreamHub& hub, bool chunked,
                const config::PlayerQueueConfig& queue);

  void on_publish_end() override;

  // Appends queued tags to the batch, at most about max_bytes.
  Fill fill(WriteBatch& batch, size_t max_bytes);
  // Ends the response after what is queued (server shutdown).
  void end();

 private:
  bool wants(const media::Frame& f) const override;
  bool started() const override { return header_sent_; }
  void append(const media::Frame& f, WriteBatch& batch) override;

  bool chunked_;
  bool ended_ = false;
  bool header_sent_ = false;
  uint64_t tags_ = 0;
};

}  // namespace sluice::server
