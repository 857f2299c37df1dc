// libFuzzer target for the fragmented-MP4 writer (media/fmp4/fmp4_writer): the input is read as a
// stream setup (codec choices, including codecs in the wrong slot, config bytes that may be
// garbage, sizes and rates of any value) and then fragments (sample counts, sequence numbers,
// start times, durations, signed composition offsets, key flags, payloads sliced from the input).
// Properties, checked by re-parsing with tests/unit/media/fmp4/fmp4_parse.hpp: no crash or
// sanitizer report; init_segment is refused exactly when no track is present or a codec is in the
// wrong slot, else its boxes tile exactly and its tracks, timescales, sample entries, configs and
// trex boxes are what the setup says; fragment is refused exactly when both spans are empty, else
// it is one moof + mdat whose box sizes are consistent, whose trun data lies inside the mdat and
// fills it back to back (video then audio), and whose samples read back equal the input (decode
// time from tfdt plus durations, duration, composition offset, size, flags, bytes).
// Seeds: corpus/fmp4_writer/, hand-made inputs of this layout.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <vector>

#include "media/fmp4/fmp4_writer.hpp"
#include "tests/unit/media/fmp4/fmp4_parse.hpp"

using namespace sluice;
using namespace sluice::media;
using namespace sluice::media::fmp4;
namespace t = sluice::media::fmp4::test;

namespace {

[[noreturn]] void fail(const char* what, const std::string& detail = "") {
  std::fprintf(stderr, "fmp4 writer: %s %s\n", what, detail.c_str());
  std::abort();
}

// Reads the input front to back; past the end everything is 0 and slices are empty.
class Input {
 public:
  explicit Input(std::span<const uint8_t> d) : d_(d) {}
  bool empty() const { return pos_ >= d_.size(); }
  uint64_t be(int n) {
    uint64_t v = 0;
    for (int i = 0; i < n; ++i) v = v << 8 | (pos_ < d_.size() ? d_[pos_++] : 0);
    return v;
  }
  uint8_t u8() { return static_cast<uint8_t>(be(1)); }
  std::span<const uint8_t> take(size_t n) {
    n = std::min(n, d_.size() - std::min(pos_, d_.size()));
    const auto s = d_.subspan(pos_, n);
    pos_ += n;
    return s;
  }

 private:
  std::span<const uint8_t> d_;
  size_t pos_ = 0;
};

hls::Codec codec_of(uint8_t v) {
  static constexpr hls::Codec kCodecs[4] = {hls::Codec::None, hls::Codec::Avc, hls::Codec::Hevc, hls::Codec::Aac};
  return kCodecs[v & 3];
}

hls::StreamSetup read_setup(Input& in) {
  hls::StreamSetup s;
  const uint8_t choice = in.u8();
  s.video.codec = codec_of(choice);
  s.audio.codec = codec_of(choice >> 2);
  const auto vconf = in.take(in.u8());
  s.video.config.assign(vconf.begin(), vconf.end());
  const auto aconf = in.take(in.u8() % 16);
  s.audio.config.assign(aconf.begin(), aconf.end());
  // Sizes and rates beyond the 16-bit fields now and then.
  s.video.width = static_cast<uint32_t>(in.be(choice & 0x10 ? 3 : 2));
  s.video.height = static_cast<uint32_t>(in.be(2));
  s.audio.sample_rate = static_cast<uint32_t>(in.be(choice & 0x20 ? 4 : 2));
  s.audio.channels = in.u8();
  s.audio.object_type = in.u8();
  return s;
}

void check_init(const hls::StreamSetup& s) {
  const std::vector<uint8_t> bytes = init_segment(s);
  const bool video = s.video.present(), audio = s.audio.present();
  const bool valid =
      (video || audio) && (!video || s.video.codec != hls::Codec::Aac) && (!audio || s.audio.codec == hls::Codec::Aac);
  if (bytes.empty() != !valid) fail("init segment refused wrongly");
  if (!valid) return;
  t::Init init;
  if (std::string e = t::parse_init(bytes, init); !e.empty()) fail("init:", e);
  if (init.top != std::vector<uint32_t>{t::fourcc("ftyp"), t::fourcc("moov")}) fail("init top-level boxes");
  const size_t tracks = size_t{video} + size_t{audio};
  if (init.tracks.size() != tracks || init.trex.size() != tracks) fail("track count");
  size_t i = 0;
  for (const hls::TrackSetup* setup : {&s.video, &s.audio}) {
    if (!setup->present()) continue;
    const t::InitTrack& tr = init.tracks[i];
    const t::Trex& x = init.trex[i++];
    const bool is_audio = setup == &s.audio;
    const uint32_t id = is_audio ? kAudioTrackId : kVideoTrackId;
    if (tr.id != id || x.track_id != id || x.description_index != 1) fail("track id");
    if (tr.timescale != hls::kClock) fail("timescale");
    if (!tr.tables_empty) fail("sample tables not empty");
    if (is_audio) {
      if (tr.entry != t::fourcc("mp4a") || tr.object_type != 0x40) fail("audio entry");
      if (tr.has_specific != !setup->config.empty() || tr.config != setup->config) fail("ASC");
      if (tr.sample_rate != (setup->sample_rate <= 0xFFFF ? setup->sample_rate << 16 : 0)) fail("sample rate");
      if (tr.channels != (setup->channels ? setup->channels : 2)) fail("channels");
    } else {
      const bool hevc = setup->codec == hls::Codec::Hevc;
      if (tr.entry != t::fourcc(hevc ? "hvc1" : "avc1") || tr.config_box != t::fourcc(hevc ? "hvcC" : "avcC")) {
        fail("video entry");
      }
      if (tr.config != setup->config) fail("avcC/hvcC payload");
      if (tr.width != std::min<uint32_t>(setup->width, 0xFFFF) ||
          tr.height != std::min<uint32_t>(setup->height, 0xFFFF)) {
        fail("picture size");
      }
    }
  }
}

// Samples of one track, times continuing from `dts`.
std::vector<hls::Sample> read_samples(Input& in, size_t n, bool video, uint64_t& dts) {
  std::vector<hls::Sample> out;
  for (size_t i = 0; i < n; ++i) {
    const uint8_t b = in.u8();
    hls::Sample s;
    s.video = video;
    s.keyframe = b & 1;
    s.duration = static_cast<uint32_t>(in.be(b & 2 ? 4 : 2));
    // Any int32, or a few frames either way.
    if (video)
      s.cts = b & 4 ? static_cast<int32_t>(static_cast<uint32_t>(in.be(4))) : static_cast<int8_t>(in.u8()) * 3600;
    s.dts = dts;
    s.data = in.take(b & 8 ? in.be(2) : in.u8() % 64);
    dts += s.duration;
    out.push_back(s);
  }
  return out;
}

void check_traf(const t::Traf& traf, const std::vector<hls::Sample>& in, bool video, size_t& at) {
  if (traf.samples.size() != in.size() || !traf.has_tfdt || traf.base_dts != in[0].dts) fail("traf header");
  for (size_t i = 0; i < in.size(); ++i) {
    const t::FragmentSample& got = traf.samples[i];
    const hls::Sample& want = in[i];
    if (got.dts != want.dts || got.duration != want.duration) fail("decode time or duration");
    if (got.cts != (video ? want.cts : 0)) fail("composition offset");
    if (got.flags != (!video || want.keyframe ? kFlagsSync : kFlagsNonSync)) fail("sample flags");
    if (got.size != want.data.size() || got.offset != at) fail("sample size or offset");
    if (!std::equal(got.bytes.begin(), got.bytes.end(), want.data.begin(), want.data.end())) fail("sample bytes");
    at += got.size;
  }
}

void check_fragment(uint32_t sequence, const std::vector<hls::Sample>& video, const std::vector<hls::Sample>& audio) {
  const std::vector<uint8_t> bytes = fragment(sequence, video, audio);
  if (bytes.empty() != (video.empty() && audio.empty())) fail("fragment refused wrongly");
  if (bytes.empty()) return;
  t::Fragment f;
  if (std::string e = t::parse_fragment(bytes, f); !e.empty()) fail("fragment:", e);
  if (f.sequence != sequence) fail("sequence number");
  if (f.trafs.size() != size_t{!video.empty()} + size_t{!audio.empty()}) fail("traf count");
  size_t at = f.mdat_payload_offset, k = 0;
  if (!video.empty()) {
    if (f.trafs[k].track_id != kVideoTrackId) fail("video track id");
    check_traf(f.trafs[k++], video, true, at);
  }
  if (!audio.empty()) {
    if (f.trafs[k].track_id != kAudioTrackId) fail("audio track id");
    check_traf(f.trafs[k], audio, false, at);
  }
  if (at != bytes.size() || at != f.mdat_payload_offset + f.mdat_payload_size) fail("mdat not filled exactly");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Input in(std::span(data, size));
  const hls::StreamSetup setup = read_setup(in);
  check_init(setup);
  uint64_t dts[2] = {in.be(8), in.be(8)};  // may wrap: the parser adds durations the same way
  uint32_t sequence = static_cast<uint32_t>(in.be(4));
  for (int fragments = 0; fragments < 64 && !in.empty(); ++fragments) {
    const uint8_t counts = in.u8();
    // Up to 15 samples a track, or a larger run of 0x10 x 15 now and then.
    const size_t scale = counts & 0x80 ? 16 : 1;
    const auto video = read_samples(in, (counts & 0x0F) * scale, true, dts[0]);
    const auto audio = read_samples(in, ((counts >> 4) & 0x07) * scale, false, dts[1]);
    check_fragment(sequence, video, audio);
    sequence += in.u8();
  }
  return 0;
}
