#include "server/relay/relay_sink.hpp"

#include "protocol/amf_value.hpp"
#include "server/io/write_batch.hpp"
#include "server/live/wire_body.hpp"
#include "server/relay/relay_client.hpp"

namespace sluice::server {

RelaySink::RelaySink(RelayClient& client, StreamRegistry& registry, std::string key, media::StreamHub& hub,
                     const config::PlayerQueueConfig& queue, uint32_t stream_id, std::string name)
    : LiveSubscriber(client, registry, std::move(key), hub, queue, " proto=relay"),
      client_(client),
      stream_id_(stream_id),
      name_(std::move(name)) {
  subscribe();
}

bool RelaySink::wants(const media::Frame& f) const {
  if (ended_) return false;
  if (f.kind != media::FrameKind::Video || f.sequence_header) return true;
  // A target starts at a keyframe (the GOP cache's, or the next one when there is none).
  if (f.keyframe) keyframe_seen_ = true;
  return keyframe_seen_;
}

void RelaySink::append(const media::Frame& f, WriteBatch& batch) {
  sent_any_ = true;
  append_frame_message(client_.session().chunk_writer(), f, f.timestamp, stream_id_, batch);
}

void RelaySink::append_notice(Notice n, WriteBatch& batch) {
  if (n != Notice::PublishEnd || ended_) return;
  ended_ = true;
  // What OBS and FFmpeg send at the end, so that platforms end the broadcast at once.
  auto& s = client_.session();
  const protocol::amf::Value args[] = {protocol::amf::Value::string(name_)};
  s.send_command(0, "FCUnpublish", 0, protocol::amf::Value::null(), args);
  s.delete_stream(stream_id_);
  client_.append_control_output(batch);
  client_.close_after_written();
}

}  // namespace sluice::server
