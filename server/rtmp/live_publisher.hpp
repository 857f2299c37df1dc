// LivePublisher: one published live stream on an RTMP connection. Its messages feed the stream's
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
#include "media/timestamp_corrector.hpp"
#include "server/live/publication.hpp"
#include "protocol/message.hpp"
#include "server/io/guard_counters.hpp"

namespace sluice::media {
class StreamHub;
}
namespace sluice::config {
struct AppConfig;
}

namespace sluice::server {

class RtmpConnection;
class Recorder;

class LivePublisher {
 public:
  // timestamp_jump_ms: the app's timestamp_jump (config/config.hpp).
  LivePublisher(RtmpConnection& conn, uint32_t stream_id, std::string key, std::string name,
                uint32_t timestamp_jump_ms);
  ~LivePublisher();
  LivePublisher(const LivePublisher&) = delete;
  LivePublisher& operator=(const LivePublisher&) = delete;

  void on_message(protocol::Message& m);

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

 private:
  RtmpConnection& conn_;
  uint32_t stream_id_;
  std::string key_;
  std::string name_;
  void log_jump(const media::TimestampCorrector::Jump& j);

  media::StreamHub* hub_;
  std::optional<Publication> publication_;  // ended in the destructor, before the name is given back
  LogRateLimit jump_log_;                   // a publisher whose clock jumps on every message must not flood the log
  bool logged_codecs_ = false;
  std::unique_ptr<Recorder> recorder_;
};

}  // namespace sluice::server
