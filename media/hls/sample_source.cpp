#include "media/hls/sample_source.hpp"

#include <algorithm>

#include "media/codec/aac.hpp"
#include "media/codec/avc.hpp"
#include "media/codec/hevc.hpp"
#include "media/flv/flv_tag_head.hpp"

namespace sluice::media::hls {

uint64_t SampleSource::unwrap(uint32_t ts) {
  if (!have_clock_) {
    have_clock_ = true;
    last_ts_ = ts;
    // A new publication starts its own timeline; the segmenter rebases it (segmenter.hpp).
    clock_ms_ = ts;
    return uint64_t(clock_ms_);
  }
  clock_ms_ += int32_t(ts - last_ts_);  // modular step: a wrap is an ordinary step
  last_ts_ = ts;
  if (clock_ms_ < 0) clock_ms_ = 0;
  return uint64_t(clock_ms_);
}

bool SampleSource::take_config(bool video, int codec, std::span<const uint8_t> record) {
  TrackSetup t;
  if (codec == int(Mp4Codec::Avc)) {
    auto c = parse_avc_config(record);
    if (!c) return false;
    t.codec = Codec::Avc;
    t.width = c->width;
    t.height = c->height;
  } else if (codec == int(Mp4Codec::Hevc)) {
    auto c = parse_hevc_config(record);
    if (!c) return false;
    t.codec = Codec::Hevc;
    t.width = c->width;
    t.height = c->height;
  } else {
    auto c = parse_aac_config(record);
    if (!c) return false;
    t.codec = Codec::Aac;
    t.sample_rate = c->sample_rate;
    t.channels = c->channels;
    t.object_type = c->object_type;
  }
  t.config.assign(record.begin(), record.end());
  TrackSetup& slot = video ? setup_.video : setup_.audio;
  if (slot.codec == t.codec && slot.config == t.config) return false;
  slot = std::move(t);
  return true;
}

SampleSource::Out SampleSource::read(const Frame& f) {
  Out out;
  if (f.kind == FrameKind::Data) return out;
  const bool video = f.kind == FrameKind::Video;
  std::span<const uint8_t> body = f.payload.span();
  const FlvTagHead p =
      read_flv_tag_head(f.rtmp_type, body.first(std::min(body.size(), kFlvTagHeadBytes)), uint32_t(body.size()));
  if (p.kind == FlvPacketKind::NoMedia || p.kind == FlvPacketKind::Unusable) return out;
  const bool carried = p.codec == Mp4Codec::Avc || p.codec == Mp4Codec::Hevc || p.codec == Mp4Codec::Aac;
  if (!carried) {
    if (skipped_.empty()) skipped_ = std::string(flv_tag_codec_name(f.rtmp_type, p));
    return out;
  }
  if (body.size() < p.prefix) return out;
  if (p.kind == FlvPacketKind::Config) {
    if (take_config(video, int(p.codec), body.subspan(p.prefix))) out.kind = Kind::Setup;
    return out;
  }
  const TrackSetup& t = video ? setup_.video : setup_.audio;
  if (!t.present()) return out;                      // no configuration yet: no decoder could use it
  if ((t.codec == Codec::Aac) == video) return out;  // a frame of another codec than the configured one
  const bool frame_is_hevc = p.codec == Mp4Codec::Hevc;
  if (video && frame_is_hevc != (t.codec == Codec::Hevc)) return out;
  out.kind = Kind::Sample;
  Sample& s = out.sample;
  s.video = video;
  s.keyframe = video ? f.keyframe : true;
  s.dts = unwrap(f.timestamp) * (kClock / 1000);
  s.cts = video ? p.cts_ms * int32_t(kClock / 1000) : 0;
  if (s.cts < 0) s.cts = 0;
  out.keep = f.payload.share(p.prefix, body.size() - p.prefix);
  s.data = out.keep.span();
  return out;
}

}  // namespace sluice::media::hls
