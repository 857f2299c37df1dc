#include "media/codec/flv_video.hpp"

#include "media/codec/fourcc.hpp"

namespace sluice::media {

VideoCodec video_codec_from_fourcc(uint32_t code) {
  switch (code) {
    case fourcc::kAvc1: return VideoCodec::Avc;
    case fourcc::kHvc1: return VideoCodec::Hevc;
    case fourcc::kVvc1: return VideoCodec::Vvc;
    case fourcc::kAv01: return VideoCodec::Av1;
    case fourcc::kVp09: return VideoCodec::Vp9;
    case fourcc::kVp08: return VideoCodec::Vp8;
    default: return VideoCodec::Unknown;
  }
}

VideoCodec video_codec_from_legacy_id(uint8_t codec_id) {
  switch (codec_id) {
    case 2: return VideoCodec::H263;
    case 3: return VideoCodec::Screen;
    case 4: return VideoCodec::Vp6;
    case 5: return VideoCodec::Vp6Alpha;
    case 6: return VideoCodec::ScreenV2;
    case kLegacyVideoCodecAvc: return VideoCodec::Avc;
    case kLegacyVideoCodecHevc: return VideoCodec::Hevc;
    default: return VideoCodec::Unknown;
  }
}

std::string_view video_codec_name(VideoCodec codec) {
  switch (codec) {
    case VideoCodec::Unknown: return "unknown";
    case VideoCodec::H263: return "H263";
    case VideoCodec::Screen: return "Screen";
    case VideoCodec::Vp6: return "VP6";
    case VideoCodec::Vp6Alpha: return "VP6A";
    case VideoCodec::ScreenV2: return "ScreenV2";
    case VideoCodec::Avc: return "H264";
    case VideoCodec::Hevc: return "HEVC";
    case VideoCodec::Vvc: return "VVC";
    case VideoCodec::Av1: return "AV1";
    case VideoCodec::Vp9: return "VP9";
    case VideoCodec::Vp8: return "VP8";
  }
  return "unknown";
}

bool VideoTagHeader::is_keyframe() const {
  if (frame_type != VideoFrameType::Key || has_command) return false;
  return packet_type == VideoPacketType::CodedFrames || packet_type == VideoPacketType::CodedFramesX;
}

bool VideoTagHeader::is_sequence_header() const {
  return packet_type == VideoPacketType::SequenceStart || packet_type == VideoPacketType::Mpeg2TsSequenceStart;
}

VideoCodec VideoTagHeader::codec() const {
  if (!enhanced) return video_codec_from_legacy_id(legacy_codec_id);
  const TrackData* t = tracks.first();
  return t ? video_codec_from_fourcc(t->fourcc) : VideoCodec::Unknown;
}

namespace {

// Legacy: FrameType(4) | CodecID(4); AVC and HEVC add AVCPacketType + SI24 CompositionTime.
Result<VideoTagHeader> parse_legacy(ByteReader& r, uint8_t b0) {
  VideoTagHeader h;
  h.frame_type = static_cast<VideoFrameType>(b0 >> 4);
  h.legacy_codec_id = b0 & 0x0F;
  if (h.frame_type == VideoFrameType::Command) {
    h.has_command = true;
    h.command = r.u8();
    if (r.failed()) return Error(Errc::Truncated, "video command");
    return h;
  }
  TrackData t;
  if (h.legacy_codec_id == kLegacyVideoCodecAvc || h.legacy_codec_id == kLegacyVideoCodecHevc) {
    const uint8_t packet_type = r.u8();
    t.composition_time = r.s24be();
    if (r.failed()) return Error(Errc::Truncated, "AVC video packet header");
    if (packet_type > 2) return Error(Errc::Malformed, "AVCPacketType " + std::to_string(packet_type));
    h.packet_type = static_cast<VideoPacketType>(packet_type);
  }
  t.fourcc = h.legacy_codec_id == kLegacyVideoCodecAvc    ? fourcc::kAvc1
             : h.legacy_codec_id == kLegacyVideoCodecHevc ? fourcc::kHvc1
                                                          : 0;
  t.data_offset = r.position();
  t.data_size = r.remaining();
  h.tracks.add(t);
  return h;
}

// The ExVideoTagHeader up to (not including) the track bodies; fills `layout`.
Result<void> parse_ex_header(ByteReader& r, uint8_t b0, VideoTagHeader& h, TrackLayout& layout) {
  h.enhanced = true;
  h.frame_type = static_cast<VideoFrameType>((b0 >> 4) & 0x07);
  uint8_t type = b0 & 0x0F;
  while (type == static_cast<uint8_t>(VideoPacketType::ModEx)) {
    auto next = read_modex(r, h.timestamp_offset_nanos);
    if (!next) return std::move(next).error();
    type = *next;
  }
  if (type != static_cast<uint8_t>(VideoPacketType::Metadata) && h.frame_type == VideoFrameType::Command) {
    h.packet_type = static_cast<VideoPacketType>(type);
    h.has_command = true;
    h.command = r.u8();
    return r.failed() ? Result<void>(Error(Errc::Truncated, "video command")) : Result<void>();
  }
  if (type == static_cast<uint8_t>(VideoPacketType::Multitrack)) {
    const uint8_t b = r.u8();
    h.multitrack = true;
    layout.multitrack = true;
    layout.type = static_cast<AvMultitrackType>(b >> 4);
    h.multitrack_type = layout.type;
    type = b & 0x0F;
    if (b >> 4 > 2) return Error(Errc::Unsupported, "AvMultitrackType " + std::to_string(b >> 4));
    if (type == static_cast<uint8_t>(VideoPacketType::Multitrack) ||
        type == static_cast<uint8_t>(VideoPacketType::ModEx))
      return Error(Errc::Malformed, "multitrack packet type may not be Multitrack or ModEx");
    if (layout.type != AvMultitrackType::ManyTracksManyCodecs) layout.fourcc = r.u32be();
  } else {
    layout.fourcc = r.u32be();
  }
  if (r.failed()) return Error(Errc::Truncated, "ExVideoTagHeader");
  if (type > static_cast<uint8_t>(VideoPacketType::ModEx))
    return Error(Errc::Unsupported, "VideoPacketType " + std::to_string(type));
  h.packet_type = static_cast<VideoPacketType>(type);
  layout.nalu_cts = h.packet_type == VideoPacketType::CodedFrames;
  return {};
}

Result<VideoTagHeader> parse_enhanced(ByteReader& r, uint8_t b0) {
  VideoTagHeader h;
  TrackLayout layout;
  auto ok = parse_ex_header(r, b0, h, layout);
  if (!ok) return std::move(ok).error();
  if (h.has_command) return h;
  ok = read_tracks(r, layout, h.tracks);
  if (!ok) return std::move(ok).error();
  return h;
}

}  // namespace

Result<VideoTagHeader> parse_video_tag(std::span<const uint8_t> body) {
  ByteReader r(body);
  const uint8_t b0 = r.u8();
  if (r.failed()) return Error(Errc::Truncated, "empty video tag");
  auto h = (b0 & 0x80) ? parse_enhanced(r, b0) : parse_legacy(r, b0);
  if (!h) return std::move(h).error().wrap("video tag");
  return h;
}

}  // namespace sluice::media
