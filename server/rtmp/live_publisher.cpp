#include "server/rtmp/live_publisher.hpp"

#include "media/frame.hpp"
#include "media/script_data.hpp"
#include "media/stream_hub.hpp"
#include "server/live/stream_registry.hpp"
#include "server/rtmp/connection.hpp"
#include "server/io/logging.hpp"

namespace sluice::server {

LivePublisher::LivePublisher(RtmpConnection& conn, uint32_t stream_id, std::string key, std::string name)
    : conn_(conn), stream_id_(stream_id), key_(std::move(key)), name_(std::move(name)) {
  // The registry created the hub when the name was claimed.
  hub_ = conn_.registry().find(key_);
  hub_->start_publish();
}

LivePublisher::~LivePublisher() {
  hub_->end_publish();
  SLUICE_LOG_INFO("conn={} event=publish_end stream={} frames={} bytes={}", conn_.id(), key_, frames_, bytes_);
  conn_.registry().release_publisher(key_, &conn_);
}

void LivePublisher::on_message(protocol::Message& m) {
  Slice payload = std::move(m.payload);
  if (m.type == protocol::msg_type::kDataAmf0) {
    // "@setDataFrame onMetaData {...}" is stored and relayed as "onMetaData {...}".
    if (auto stripped = media::strip_set_data_frame(payload)) payload = std::move(*stripped);
  }
  ++frames_;
  bytes_ += payload.size();
  media::FramePtr frame = media::make_frame(m.type, m.timestamp, std::move(payload));
  hub_->publish(frame);
  if (!logged_codecs_ && frame->sequence_header && frame->kind == media::FrameKind::Video) {
    logged_codecs_ = true;
    SLUICE_LOG_INFO("conn={} event=stream_info stream={} {}", conn_.id(), key_, hub_->info().summary());
  }
}

}  // namespace sluice::server
