#include "server/live/publication.hpp"

#include "media/script_data.hpp"
#include "media/stream_hub.hpp"
#include "protocol/message.hpp"

namespace sluice::server {

Publication::Publication(media::StreamHub& hub, uint32_t timestamp_jump_ms, std::optional<uint32_t> continue_after)
    : hub_(hub), timestamps_(timestamp_jump_ms) {
  if (continue_after) timestamps_.continue_after(*continue_after);
  // While the publication taken over goes on this is a republish: caches dropped, subscribers told
  // of a start (media/stream_hub.hpp, rule 5), never of an end.
  hub_.start_publish();
  hub_.health().on_publish_start(continue_after.has_value());
}

Publication::~Publication() {
  if (!quiet_end_) hub_.end_publish();
}

media::FramePtr Publication::publish(uint8_t type, uint32_t timestamp, Slice payload, uint64_t now_ms,
                                     std::optional<media::TimestampCorrector::Jump>& jump) {
  if (type == protocol::msg_type::kDataAmf0) {
    if (auto stripped = media::strip_set_data_frame(payload)) payload = std::move(*stripped);
  }
  // Only the timestamp (a header field) changes.
  const uint32_t corrected = timestamps_.correct(media::frame_kind(type), timestamp, &jump);
  media::FramePtr frame = media::make_frame(type, corrected, std::move(payload));
  if (frame->kind == media::FrameKind::Audio && timestamps_.before_handover()) {
    // A taker's audio stamped before its first message covers time the publication it continues
    // already covered: left out, so that no player's or segment's audio goes back. Its setup is
    // kept, at the handover point.
    if (!frame->sequence_header) return nullptr;
    frame = media::make_frame(type, timestamps_.handover_at(), frame->payload.share());
  }
  ++frames_;
  bytes_ += frame->payload.size();
  if (jump) hub_.health().on_timestamp_jump();
  hub_.health().on_frame(*frame, now_ms);
  hub_.publish(frame);
  return frame;
}

}  // namespace sluice::server
