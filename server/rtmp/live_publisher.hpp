// LivePublisher: one published live stream on a connection. Turns the publisher's messages into
// frames for the stream's hub; ends the publication when destroyed.
#pragma once

#include <cstdint>
#include <string>

#include "protocol/message.hpp"

namespace sluice::media {
class StreamHub;
}

namespace sluice::server {

class RtmpConnection;

class LivePublisher {
 public:
  LivePublisher(RtmpConnection& conn, uint32_t stream_id, std::string key, std::string name);
  ~LivePublisher();
  LivePublisher(const LivePublisher&) = delete;
  LivePublisher& operator=(const LivePublisher&) = delete;

  void on_message(protocol::Message& m);

  uint32_t stream_id() const { return stream_id_; }
  const std::string& name() const { return name_; }
  const std::string& key() const { return key_; }

 private:
  RtmpConnection& conn_;
  uint32_t stream_id_;
  std::string key_;
  std::string name_;
  media::StreamHub* hub_;
  uint64_t frames_ = 0;
  uint64_t bytes_ = 0;
  bool logged_codecs_ = false;
};

}  // namespace sluice::server
