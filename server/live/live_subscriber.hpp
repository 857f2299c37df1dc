// LiveSubscriber: what every kind of live player shares (an RTMP player, an HTTP-FLV reader; HLS
// muxers and relays later): the subscription to the stream's hub, a bounded queue under the
// slow-player policy (config rtmp.player_queue), the drop/close rule, when to ask for a flush, and
// the fill loop that moves queued frames into the connection's batch. A kind of player only says
// which frames it takes and how one frame is framed on its wire (append()). The connection is a
// PlayerOutput (server/io/player_output.hpp): a TCP socket, or a transport that is none (SRT).
//
// The policy (docs/live.md, "What players see"): past the soft limit the queue loses inter frames up
// to the next keyframe (never audio, metadata or sequence headers) and the drop is counted; past
// the hard limit the connection is closed at the end of the loop iteration with a log line. A
// player's first frames go out at once; later ones may be held briefly so that several messages
// share one write, unless a burst is large.
//
// Notices (the publisher left, a publisher came back) are ordered with the media: one goes out
// right after the last frame queued before it, never ahead of frames still held or waiting for the
// socket (a recorder that stops at UnpublishNotify would lose them).
//
// Lifetime: the derived class calls subscribe() at the end of its constructor (joining replays
// the GOP cache through on_frame, which needs the derived part); destroying it unsubscribes it (never from inside a hub
// callback: the connection destroys it from its flush or close) and lets the registry drop the
// hub when nobody uses it any more.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "media/stream_hub.hpp"
#include "media/subscriber_queue.hpp"
#include "server/io/player_output.hpp"

namespace sluice::server {

class StreamRegistry;
class WriteBatch;

class LiveSubscriber : public media::Subscriber {
 public:
  // proto_field is the log lines' protocol field (" proto=http-flv", or empty for RTMP).
  LiveSubscriber(PlayerOutput& output, StreamRegistry& registry, std::string key, media::StreamHub& hub,
                 const config::PlayerQueueConfig& queue, const char* proto_field);
  ~LiveSubscriber() override;
  LiveSubscriber(const LiveSubscriber&) = delete;
  LiveSubscriber& operator=(const LiveSubscriber&) = delete;

  void on_frame(const media::FramePtr& frame) final;

  const std::string& key() const { return key_; }
  uint64_t dropped_frames() const { return queue_.dropped_frames(); }

 protected:
  // Which frames this kind of player takes at the moment.
  virtual bool wants(const media::Frame& f) const = 0;
  // Whether it has sent anything yet: its start is flushed at once, never held.
  virtual bool started() const = 0;
  // Frames one frame into the batch.
  virtual void append(const media::Frame& f, WriteBatch& batch) = 0;

  enum class Notice : uint8_t { PublishEnd, PublishStart };
  // Frames one notice into the batch, in its place after the frames queued before it.
  virtual void append_notice(Notice n, WriteBatch& batch) {
    (void)n;
    (void)batch;
  }
  // Queues a notice behind every frame queued so far and asks for a flush (not a held one: the
  // frames before an end have nothing more to wait for).
  void queue_notice(Notice n);

  // Moves queued frames, and the notices due after them, into the batch through append() and
  // append_notice(), at most about max_bytes; true when frames or notices remain queued.
  bool fill_frames(WriteBatch& batch, size_t max_bytes);
  bool queue_empty() const { return queue_.empty(); }
  // Drops the queued frames; notices queued behind them become due.
  void clear_queue() {
    queue_.clear();
    frames_out_ = frames_in_;
  }

  void subscribe();
  void unsubscribe();
  bool subscribed() const { return subscribed_; }
  // The stream's hub; hub().info() is only meaningful while subscribed.
  media::StreamHub& hub() { return hub_; }

  PlayerOutput& output_;  // the connection it writes to

 private:
  StreamRegistry& registry_;
  std::string key_;
  media::StreamHub& hub_;
  media::SubscriberQueue queue_;
  // Frames ever queued and ever taken out: a notice is due once frames_out_ reaches its `after`.
  uint64_t frames_in_ = 0;
  uint64_t frames_out_ = 0;
  struct PendingNotice {
    uint64_t after;
    Notice notice;
  };
  std::vector<PendingNotice> notices_;  // oldest first; nearly always empty
  const char* proto_field_;
  bool subscribed_ = false;
};

}  // namespace sluice::server
