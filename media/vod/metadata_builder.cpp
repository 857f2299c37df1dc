#include "media/vod/metadata_builder.hpp"

#include <string>

#include "media/codec/fourcc.hpp"
#include "protocol/amf0.hpp"

namespace sluice::media::vod {

namespace amf = protocol::amf;

namespace {

struct TrackTotals {
  uint64_t bytes = 0;
  uint64_t count = 0;
};

TrackTotals totals_of(const MediaIndex& index, uint8_t type) {
  TrackTotals t;
  for (const Sample& s : index.samples) {
    if (s.type != type) continue;
    t.bytes += s.size;
    ++t.count;
  }
  return t;
}

double video_codec_id(VideoCodec codec) {
  switch (codec) {
    case VideoCodec::Avc: return kLegacyVideoCodecAvc;
    case VideoCodec::Hevc: return static_cast<double>(fourcc::kHvc1);
    case VideoCodec::H263: return 2;
    case VideoCodec::Vp6: return 4;
    default: return 0;
  }
}

double audio_codec_id(AudioCodec codec) {
  switch (codec) {
    case AudioCodec::Aac: return kSoundFormatAac;
    case AudioCodec::Mp3: return 2;
    default: return 0;
  }
}

void add(amf::Properties& props, const char* name, double v) { props.emplace_back(name, amf::Value::number(v)); }

}  // namespace

std::vector<uint8_t> build_on_metadata(const MediaIndex& index) {
  const double seconds = index.duration_ms / 1000.0;
  amf::Properties props;
  add(props, "duration", seconds);
  if (index.has_video) {
    const TrackTotals v = totals_of(index, kSampleVideo);
    if (index.width && index.height) {
      add(props, "width", index.width);
      add(props, "height", index.height);
    }
    if (seconds > 0) {
      add(props, "framerate", static_cast<double>(v.count) / seconds);
      add(props, "videodatarate", static_cast<double>(v.bytes) * 8 / 1000 / seconds);
    }
    add(props, "videocodecid", video_codec_id(index.video_codec));
  }
  if (index.has_audio) {
    const TrackTotals a = totals_of(index, kSampleAudio);
    if (index.audio_sample_rate) add(props, "audiosamplerate", index.audio_sample_rate);
    add(props, "audiosamplesize", 16);
    props.emplace_back("stereo", amf::Value::boolean(index.audio_channels > 1));
    if (seconds > 0) add(props, "audiodatarate", static_cast<double>(a.bytes) * 8 / 1000 / seconds);
    add(props, "audiocodecid", audio_codec_id(index.audio_codec));
  }
  add(props, "filesize", static_cast<double>(index.file_size));
  // Every sample is indexed, so a player may seek anywhere, not only into what it buffered.
  props.emplace_back("canSeekToEnd", amf::Value::boolean(true));

  std::vector<uint8_t> out;
  amf::encode_amf0(amf::Value::string("onMetaData"), out);
  amf::encode_amf0(amf::Value::ecma_array(std::move(props)), out);
  return out;
}

}  // namespace sluice::media::vod
