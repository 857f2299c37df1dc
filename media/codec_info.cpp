#include "media/codec_info.hpp"

#include "media/codec/aac.hpp"
#include "media/codec/avc.hpp"
#include "media/codec/flv_audio.hpp"
#include "media/codec/flv_video.hpp"
#include "media/codec/hevc.hpp"

namespace sluice::media {

namespace {

std::span<const uint8_t> track_data(const Frame& f, const TrackData& t) {
  return f.payload.span().subspan(t.data_offset, t.data_size);
}

void learn_video_config(CodecInfo& info, VideoCodec codec, std::span<const uint8_t> record) {
  if (codec == VideoCodec::Avc) {
    if (auto c = parse_avc_config(record)) {
      info.video_profile = avc_profile_name(c->profile);
      info.video_level = c->level;
      info.width = c->width;
      info.height = c->height;
    }
  } else if (codec == VideoCodec::Hevc) {
    if (auto c = parse_hevc_config(record)) {
      info.video_profile = hevc_profile_name(c->profile_idc);
      info.video_level = c->level_idc;
      info.width = c->width;
      info.height = c->height;
    }
  }
}

// Opus ID header (RFC 7845 5.1): "OpusHead", version, channel count; playback is always 48 kHz.
void learn_opus_config(CodecInfo& info, std::span<const uint8_t> head) {
  constexpr std::string_view kMagic = "OpusHead";
  if (head.size() < 10 || std::string_view(reinterpret_cast<const char*>(head.data()), 8) != kMagic) return;
  info.channels = head[9];
  info.sample_rate = 48000;
}

void learn_audio_config(CodecInfo& info, AudioCodec codec, std::span<const uint8_t> config) {
  if (codec == AudioCodec::Aac) {
    if (auto c = parse_aac_config(config)) {
      info.audio_profile = aac_object_type_name(c->object_type);
      info.sample_rate = c->sample_rate;
      info.channels = c->channels;
    }
  } else if (codec == AudioCodec::Opus) {
    learn_opus_config(info, config);
  }
}

void update_video(CodecInfo& info, const Frame& f) {
  if (!f.sequence_header && info.has_video()) return;
  auto h = parse_video_tag(f.payload.span());
  if (!h) return;
  const TrackData* t = h->tracks.first();
  info.video_codec = video_codec_name(h->codec());
  if (f.sequence_header && t) learn_video_config(info, h->codec(), track_data(f, *t));
}

void update_audio(CodecInfo& info, const Frame& f) {
  if (!f.sequence_header && info.has_audio()) return;
  auto h = parse_audio_tag(f.payload.span());
  if (!h) return;
  const TrackData* t = h->tracks.first();
  info.audio_codec = audio_codec_name(h->codec());
  if (!h->enhanced && h->codec() != AudioCodec::Aac) {
    // Legacy codecs without a configuration record: the tag header byte is all there is.
    info.sample_rate = h->legacy_rate_hz;
    info.channels = h->legacy_channels;
  }
  if (f.sequence_header && t) learn_audio_config(info, h->codec(), track_data(f, *t));
}

std::string level_string(std::string_view codec, uint8_t level) {
  if (codec == "HEVC") {
    const unsigned tenths = level / 3;  // level_idc = 30 * level
    return std::to_string(tenths / 10) + (tenths % 10 ? "." + std::to_string(tenths % 10) : "");
  }
  return std::to_string(level / 10) + "." + std::to_string(level % 10);
}

}  // namespace

void CodecInfo::update(const Frame& f) {
  if (f.track != 0) return;  // the summary describes the default track
  if (f.kind == FrameKind::Video) update_video(*this, f);
  if (f.kind == FrameKind::Audio) update_audio(*this, f);
}

std::string CodecInfo::summary() const {
  std::string out;
  if (has_video()) {
    out += "video=" + std::string(video_codec);
    if (!video_profile.empty()) out += " " + std::string(video_profile) + "@" + level_string(video_codec, video_level);
    if (width && height) out += " " + std::to_string(width) + "x" + std::to_string(height);
  }
  if (has_audio()) {
    if (!out.empty()) out += " ";
    out += "audio=" + std::string(audio_profile.empty() ? audio_codec : audio_profile);
    if (sample_rate) out += " " + std::to_string(sample_rate) + "Hz";
    if (channels) out += " " + std::to_string(channels) + "ch";
  }
  return out.empty() ? "none" : out;
}

}  // namespace sluice::media
