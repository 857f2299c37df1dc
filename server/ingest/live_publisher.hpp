// LivePublisher: one published live stream, whatever protocol brings it (an RTMP publish, an SRT
// caller in publish mode), on the connection that owns it (a PublisherHost). Its frames feed the stream's
// hub through a Publication (server/live/publication.hpp: continuous timestamps, counts, the
// publication's start and end); it starts what a publish brings with it (push targets, HLS, the
// recording) and gives the name back when destroyed.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "server/access/access_ticket.hpp"
#include "server/live/stream_registry.hpp"
#include "media/timestamp_corrector.hpp"
#include "server/live/publication.hpp"
#include "protocol/message.hpp"
#include "server/io/guard_counters.hpp"
#include "server/ingest/publish_services.hpp"

namespace sluice::media {
class StreamHub;
}
namespace sluice::config {
struct AppConfig;
}

namespace sluice::server {

class Recorder;

class LivePublisher final : public PublisherSeat {
 public:
  // timestamp_jump_ms: the app's timestamp_jump (config/config.hpp). continue_after: it took the
  // name over from a publication that ended quietly (server/live/publication.hpp).
  LivePublisher(PublisherHost& host, uint32_t stream_id, std::string key, std::string name, uint32_t timestamp_jump_ms,
                std::optional<uint32_t> continue_after = {});
  ~LivePublisher() override;
  LivePublisher(const LivePublisher&) = delete;
  LivePublisher& operator=(const LivePublisher&) = delete;

  void on_message(protocol::Message& m);
  // One canonical frame (media/frame.hpp: an FLV tag's type and body, a millisecond timestamp).
  void on_frame(uint8_t type, uint32_t timestamp, Slice payload);

  uint32_t stream_id() const { return stream_id_; }
  const std::string& name() const { return name_; }
  const std::string& key() const { return key_; }
  // Its push targets: the app's, the API's, and `extra` (url, key) from the on_publish hook.
  void start_relays(const config::AppConfig& app, const std::vector<std::pair<std::string, std::string>>& extra);
  // apps.NAME.record: records this publication (server/record/recorder.hpp).
  void start_recording(const config::AppConfig& app);
  // Ends the recording under way (its file is finished as at unpublish); false when none was.
  bool stop_recording(const std::string& why);
  bool recording() const;
  const Recorder* recorder() const { return recorder_.get(); }

  // Its seat in the app's limits and its done hook (server/access/access_ticket.hpp).
  AccessTicket ticket;

  // PublisherSeat (server/live/stream_registry.hpp): a takeover ends this publisher through its
  // host, which owns it (`this` is gone when give_up returns).
  uint64_t quiet_ms() const override;
  std::optional<uint32_t> give_up(const std::string& why, const SessionPeer* taker) override;
  void request_keyframe() override { host_.request_keyframe(); }

 private:
  // Who has the name's cluster claim after this publisher: nobody (it is released), the taker on
  // this loop (the claim is shared: nothing to do), or on another loop of this node (this loop
  // stops refreshing it and leaves it in place).
  enum class Successor : uint8_t { None, SameLoop, OtherLoop };
  PublisherHost& host_;
  PublishServices& services_;
  uint32_t stream_id_;
  std::string key_;
  std::string name_;
  void log_jump(const media::TimestampCorrector::Jump& j);

  media::StreamHub* hub_;
  std::optional<Publication> publication_;  // ended in the destructor, before the name is given back
  LogRateLimit jump_log_;                   // a publisher whose clock jumps on every message must not flood the log
  bool logged_codecs_ = false;
  std::unique_ptr<Recorder> recorder_;
  uint64_t last_frame_ms_ = 0;  // the loop's clock: when the publication began or last brought a frame
  Successor cluster_successor_ = Successor::None;
};

}  // namespace sluice::server
