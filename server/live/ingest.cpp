#include "server/live/ingest.hpp"

#include "media/script_data.hpp"

namespace sluice::server {

media::FramePtr ingest_frame(protocol::Message& m, media::TimestampCorrector& timestamps,
                             std::optional<media::TimestampCorrector::Jump>& jump) {
  Slice payload = std::move(m.payload);
  if (m.type == protocol::msg_type::kDataAmf0) {
    if (auto stripped = media::strip_set_data_frame(payload)) payload = std::move(*stripped);
  }
  // Only the timestamp (a header field) changes.
  const uint32_t timestamp = timestamps.correct(media::frame_kind(m.type), m.timestamp, &jump);
  return media::make_frame(m.type, timestamp, std::move(payload));
}

}  // namespace sluice::server
