#include "media/frame.hpp"

#include "media/codec/flv_audio.hpp"
#include "media/codec/flv_video.hpp"
#include "media/script_data.hpp"
#include "protocol/message.hpp"

namespace sluice::media {

namespace msg_type = protocol::msg_type;

namespace {

void classify_video(Frame& f) {
  auto h = parse_video_tag(f.payload.span());
  if (!h) return;
  f.keyframe = h->is_keyframe();
  f.sequence_header = h->is_sequence_header();
  if (const TrackData* t = h->tracks.first()) f.track = t->id;
}

void classify_audio(Frame& f) {
  auto h = parse_audio_tag(f.payload.span());
  if (!h) return;
  f.sequence_header = h->is_sequence_header();
  if (const TrackData* t = h->tracks.first()) f.track = t->id;
}

void classify_data(Frame& f) {
  if (f.rtmp_type == msg_type::kDataAmf0) {
    if (auto stripped = strip_set_data_frame(f.payload)) f.payload = std::move(*stripped);
    f.metadata = is_on_metadata(f.payload.span());
  } else if (f.rtmp_type == msg_type::kDataAmf3 && !f.payload.empty() && f.payload[0] == 0) {
    // AMF3 data messages start with a format byte 0, then AMF0 values. A re-slice cannot drop
    // "@setDataFrame" and keep that byte, so these are relayed as they are.
    f.metadata = is_on_metadata(f.payload.span().subspan(1));
  }
}

}  // namespace

FrameKind frame_kind(uint8_t rtmp_type) {
  if (rtmp_type == msg_type::kVideo) return FrameKind::Video;
  if (rtmp_type == msg_type::kAudio) return FrameKind::Audio;
  return FrameKind::Data;
}

FramePtr make_frame(uint8_t rtmp_type, uint32_t timestamp, Slice payload) {
  auto f = std::make_shared<Frame>();
  f->rtmp_type = rtmp_type;
  f->timestamp = timestamp;
  f->payload = std::move(payload);
  switch (rtmp_type) {
    case msg_type::kVideo:
      f->kind = FrameKind::Video;
      classify_video(*f);
      break;
    case msg_type::kAudio:
      f->kind = FrameKind::Audio;
      classify_audio(*f);
      break;
    default:
      f->kind = FrameKind::Data;
      classify_data(*f);
      break;
  }
  return f;
}

FramePtr copy_frame(const Frame& f) {
  auto c = std::make_shared<Frame>();
  c->kind = f.kind;
  c->rtmp_type = f.rtmp_type;
  c->timestamp = f.timestamp;
  c->payload = f.payload.clone();
  c->keyframe = f.keyframe;
  c->sequence_header = f.sequence_header;
  c->metadata = f.metadata;
  c->track = f.track;
  return c;
}

}  // namespace sluice::media
