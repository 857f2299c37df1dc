// media/fmp4/fmp4_writer: init segments and fragments read back with fmp4_parse.hpp (box order,
// track ids, 90 kHz timescales, sample entries carrying the configs unchanged, trex defaults;
// samples round-tripping exactly, data offsets with one and two tracks, sequence numbers), exact
// bytes of a small fragment and of the ftyp, and the inputs refused.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "media/fmp4/fmp4_writer.hpp"
#include "unit/media/fmp4/fmp4_parse.hpp"

using namespace sluice;
using namespace sluice::media;
using namespace sluice::media::fmp4;
using namespace sluice::media::fmp4::test;
using Buffer = std::vector<uint8_t>;

namespace {

// A short but well-formed avcC (High, level 3.0, 4-byte lengths, one SPS and one PPS).
const Buffer kAvcc = {0x01, 0x64, 0x00, 0x1E, 0xFF, 0xE1, 0x00, 0x04, 0x67, 0x64,
                      0x00, 0x1E, 0x01, 0x00, 0x04, 0x68, 0xEB, 0xE3, 0xCB};
const Buffer kHvcc = {0x01, 0x01, 0x60, 0x00, 0x00, 0x00, 0x90, 0x00, 0x00, 0x00, 0x00, 0x00,
                      0x5A, 0xF0, 0x00, 0xFC, 0xFD, 0xF8, 0xF8, 0x00, 0x00, 0x0F, 0x00};
const Buffer kAsc = {0x12, 0x10};  // AAC-LC, 44100 Hz, stereo

hls::TrackSetup video_setup(hls::Codec codec = hls::Codec::Avc) {
  hls::TrackSetup t;
  t.codec = codec;
  t.config = codec == hls::Codec::Hevc ? kHvcc : kAvcc;
  t.width = 320;
  t.height = 240;
  return t;
}

hls::TrackSetup audio_setup(uint32_t rate = 44100) {
  hls::TrackSetup t;
  t.codec = hls::Codec::Aac;
  t.config = kAsc;
  t.sample_rate = rate;
  t.channels = 2;
  t.object_type = 2;
  return t;
}

Init init_of(const hls::StreamSetup& setup) {
  const Buffer bytes = init_segment(setup);
  REQUIRE(!bytes.empty());
  Init init;
  const std::string error = parse_init(bytes, init);
  INFO(error);
  REQUIRE(error.empty());
  return init;
}

Fragment fragment_of(const Buffer& bytes) {
  REQUIRE(!bytes.empty());
  Fragment f;
  const std::string error = parse_fragment(bytes, f);
  INFO(error);
  REQUIRE(error.empty());
  return f;
}

std::vector<uint32_t> fourccs(std::initializer_list<const char*> names) {
  std::vector<uint32_t> out;
  for (const char* n : names) out.push_back(fourcc(n));
  return out;
}

// Sample payloads live here, so the spans of the samples stay valid.
struct Samples {
  std::vector<Buffer> data;
  std::vector<hls::Sample> list;
  void add(bool video, bool key, uint64_t dts, int32_t cts, uint32_t duration, Buffer bytes) {
    data.push_back(std::move(bytes));
    list.push_back({video, key, dts, cts, duration, {}});
  }
  // Call once all are added (the vector of buffers no longer moves).
  std::span<const hls::Sample> span() {
    for (size_t i = 0; i < list.size(); ++i) list[i].data = data[i];
    return list;
  }
};

Buffer payload(size_t n, uint8_t seed) {
  Buffer b(n);
  for (size_t i = 0; i < n; ++i) b[i] = static_cast<uint8_t>(seed + i * 7);
  return b;
}

// Video with B-frames (negative and positive composition offsets) starting at a large dts.
Samples video_samples() {
  Samples s;
  const uint64_t start = (uint64_t{1} << 33) + 12345;  // past 32 bits: tfdt version 1 matters
  s.add(true, true, start, 3600, 3600, payload(120, 1));
  s.add(true, false, start + 3600, 10800, 3600, payload(40, 2));
  s.add(true, false, start + 7200, -3600, 3600, payload(33, 3));
  s.add(true, false, start + 10800, 0, 3000, payload(0, 4));  // an empty sample is kept
  s.add(true, true, start + 13800, 0, 3600, payload(77, 5));
  return s;
}

Samples audio_samples() {
  Samples s;
  uint64_t dts = (uint64_t{1} << 33) + 10000;
  for (int i = 0; i < 6; ++i) {
    const uint32_t duration = 2089 + (i % 2);  // 1024 samples at 44.1 kHz, rounded both ways
    s.add(false, false, dts, 0, duration, payload(10 + i, uint8_t(50 + i)));
    dts += duration;
  }
  return s;
}

// The parsed samples of one traf are the input's, byte for byte, in the order given.
void check_round_trip(const Traf& t, std::span<const hls::Sample> in, bool video) {
  REQUIRE(t.samples.size() == in.size());
  CHECK(t.has_tfdt);
  CHECK(t.tfdt_version == 1);
  CHECK(t.base_dts == in[0].dts);
  CHECK((t.tfhd_flags & 0x020000) != 0);  // default-base-is-moof
  CHECK((t.tfhd_flags & 0x000001) == 0);  // no base_data_offset
  for (size_t i = 0; i < in.size(); ++i) {
    CAPTURE(i);
    const FragmentSample& got = t.samples[i];
    CHECK(got.dts == in[i].dts);
    CHECK(got.duration == in[i].duration);
    CHECK(got.cts == (video ? in[i].cts : 0));
    CHECK(got.size == in[i].data.size());
    CHECK(Buffer(got.bytes.begin(), got.bytes.end()) == Buffer(in[i].data.begin(), in[i].data.end()));
    const uint32_t want = !video || in[i].keyframe ? 0x02000000 : 0x01010000;
    CHECK(got.flags == want);
  }
}

Buffer from_hex(std::string_view hex) {
  Buffer out;
  int nibbles = 0;
  uint8_t byte = 0;
  for (char c : hex) {
    int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (v < 0) continue;
    byte = static_cast<uint8_t>(byte << 4 | v);
    if (++nibbles % 2 == 0) out.push_back(byte);
  }
  return out;
}

}  // namespace

TEST_CASE("init segment: H.264 + AAC") {
  const hls::StreamSetup setup{video_setup(), audio_setup()};
  const Init init = init_of(setup);
  CHECK(init.top == fourccs({"ftyp", "moov"}));
  CHECK(init.major == fourcc("iso6"));
  CHECK(init.compatible == fourccs({"iso6", "mp41"}));
  CHECK(init.moov == fourccs({"mvhd", "trak", "trak", "mvex"}));
  CHECK(init.next_track_id == 3);
  REQUIRE(init.tracks.size() == 2);

  const InitTrack& v = init.tracks[0];
  CHECK(v.id == kVideoTrackId);
  CHECK(v.timescale == 90000);
  CHECK(v.handler == fourcc("vide"));
  CHECK(v.entry == fourcc("avc1"));
  CHECK(v.config_box == fourcc("avcC"));
  CHECK(v.config == kAvcc);
  CHECK(v.width == 320);
  CHECK(v.height == 240);
  CHECK(v.stbl == fourccs({"stsd", "stts", "stsc", "stsz", "stco"}));
  CHECK(v.tables_empty);

  const InitTrack& a = init.tracks[1];
  CHECK(a.id == kAudioTrackId);
  CHECK(a.timescale == 90000);
  CHECK(a.handler == fourcc("soun"));
  CHECK(a.entry == fourcc("mp4a"));
  CHECK(a.config_box == fourcc("esds"));
  CHECK(a.object_type == 0x40);
  CHECK(a.has_specific);
  CHECK(a.config == kAsc);
  CHECK(a.channels == 2);
  CHECK(a.sample_rate == 44100u << 16);
  CHECK(a.tables_empty);

  REQUIRE(init.trex.size() == 2);
  for (size_t i = 0; i < 2; ++i) {
    CAPTURE(i);
    CHECK(init.trex[i].track_id == (i == 0 ? kVideoTrackId : kAudioTrackId));
    CHECK(init.trex[i].description_index == 1);
    CHECK(init.trex[i].duration == 0);
    CHECK(init.trex[i].size == 0);
    CHECK(init.trex[i].flags == 0);
  }

  // Deterministic, and the ftyp is exactly this.
  const Buffer bytes = init_segment(setup);
  CHECK(bytes == init_segment(setup));
  const Buffer ftyp = from_hex("00000018 66747970 69736f36 00000000 69736f36 6d703431");
  REQUIRE(bytes.size() > ftyp.size());
  CHECK(Buffer(bytes.begin(), bytes.begin() + 24) == ftyp);
}

TEST_CASE("init segment: HEVC is hvc1 + hvcC; one track alone keeps its id") {
  const Init hevc = init_of({video_setup(hls::Codec::Hevc), {}});
  CHECK(hevc.moov == fourccs({"mvhd", "trak", "mvex"}));
  REQUIRE(hevc.tracks.size() == 1);
  CHECK(hevc.tracks[0].id == kVideoTrackId);
  CHECK(hevc.tracks[0].entry == fourcc("hvc1"));
  CHECK(hevc.tracks[0].config_box == fourcc("hvcC"));
  CHECK(hevc.tracks[0].config == kHvcc);
  REQUIRE(hevc.trex.size() == 1);
  CHECK(hevc.trex[0].track_id == kVideoTrackId);

  const Init audio = init_of({{}, audio_setup()});
  REQUIRE(audio.tracks.size() == 1);
  CHECK(audio.tracks[0].id == kAudioTrackId);
  CHECK(audio.tracks[0].entry == fourcc("mp4a"));
  REQUIRE(audio.trex.size() == 1);
  CHECK(audio.trex[0].track_id == kAudioTrackId);
}

TEST_CASE("init segment: edge values") {
  SUBCASE("a rate past 65535 Hz is 0 in the entry; the ASC still says it") {
    hls::TrackSetup a = audio_setup(96000);
    a.config = {0x11, 0x90};
    const Init init = init_of({{}, a});
    CHECK(init.tracks[0].sample_rate == 0);
    CHECK(init.tracks[0].config == a.config);
  }
  SUBCASE("empty configs are written as they are") {
    hls::TrackSetup v = video_setup(), a = audio_setup();
    v.config.clear();
    a.config.clear();
    const Init init = init_of({v, a});
    CHECK(init.tracks[0].config.empty());
    CHECK(!init.tracks[1].has_specific);
  }
  SUBCASE("pictures past 65535 pixels are clamped, not wrapped") {
    hls::TrackSetup v = video_setup();
    v.width = 70000;
    v.height = 65536;
    const Init init = init_of({v, {}});
    CHECK(init.tracks[0].width == 0xFFFF);
    CHECK(init.tracks[0].height == 0xFFFF);
  }
  SUBCASE("refused") {
    CHECK(init_segment({}).empty());
    CHECK(init_segment({audio_setup(), {}}).empty());  // AAC as video
    CHECK(init_segment({{}, video_setup()}).empty());  // H.264 as audio
    hls::TrackSetup big = video_setup();
    big.config.assign(kMaxConfigBytes + 1, 0);
    CHECK(init_segment({big, audio_setup()}).empty());
    big.config.resize(kMaxConfigBytes);
    CHECK(!init_segment({big, audio_setup()}).empty());
  }
}

TEST_CASE("fragment: both tracks round-trip, data offsets point into the mdat") {
  Samples v = video_samples(), a = audio_samples();
  const auto vs = v.span(), as = a.span();
  const Buffer bytes = fragment(42, vs, as);
  const Fragment f = fragment_of(bytes);
  CHECK(f.top == fourccs({"moof", "mdat"}));
  CHECK(f.moof == fourccs({"mfhd", "traf", "traf"}));
  CHECK(f.sequence == 42);
  REQUIRE(f.trafs.size() == 2);
  CHECK(f.trafs[0].track_id == kVideoTrackId);
  CHECK(f.trafs[1].track_id == kAudioTrackId);
  CHECK(f.trafs[0].boxes == fourccs({"tfhd", "tfdt", "trun"}));
  check_round_trip(f.trafs[0], vs, true);
  check_round_trip(f.trafs[1], as, false);

  // The mdat holds exactly the video samples, then the audio ones, back to back.
  size_t at = f.mdat_payload_offset, total = 0;
  for (const Traf& t : f.trafs) {
    for (const FragmentSample& s : t.samples) {
      CHECK(s.offset == at);
      at += s.size;
      total += s.size;
    }
  }
  CHECK(total == f.mdat_payload_size);
  CHECK(at == bytes.size());
  CHECK(bytes == fragment(42, vs, as));
}

TEST_CASE("fragment: exact bytes of one video sample") {
  Samples v;
  v.add(true, true, 0x0102030405, -1500, 3000, {0xAA, 0xBB, 0xCC});
  const Buffer want = from_hex(
      "00000068 6d6f6f66"                             // moof, 104 bytes
      "00000010 6d666864 00000000 00000001"           // mfhd, sequence 1
      "00000050 74726166"                             // traf
      "00000010 74666864 00020000 00000001"           // tfhd default-base-is-moof, track 1
      "00000014 74666474 01000000 00000001 02030405"  // tfdt v1
      "00000024 7472756e 01000f01 00000001 00000070"  // trun v1, 1 sample, data at 112
      "00000bb8 00000003 02000000 fffffa24"           // duration, size, sync, cts -1500
      "0000000b 6d646174 aabbcc");                    // mdat
  CHECK(fragment(1, v.span(), {}) == want);
}

TEST_CASE("fragment: sequence numbers, one track alone") {
  Samples v = video_samples(), a = audio_samples();
  const auto vs = v.span(), as = a.span();
  for (uint32_t seq : {0u, 1u, 2u, 0xFFFFFFFFu}) {
    CAPTURE(seq);
    CHECK(fragment_of(fragment(seq, vs, as)).sequence == seq);
  }
  // (The parsed samples point into the bytes: keep them.)
  const Buffer video_bytes = fragment(3, vs, {});
  const Fragment video_only = fragment_of(video_bytes);
  CHECK(video_only.moof == fourccs({"mfhd", "traf"}));
  REQUIRE(video_only.trafs.size() == 1);
  CHECK(video_only.trafs[0].track_id == kVideoTrackId);
  check_round_trip(video_only.trafs[0], vs, true);
  CHECK(video_only.trafs[0].samples[0].offset == video_only.mdat_payload_offset);

  const Buffer audio_bytes = fragment(4, {}, as);
  const Fragment audio_only = fragment_of(audio_bytes);
  REQUIRE(audio_only.trafs.size() == 1);
  CHECK(audio_only.trafs[0].track_id == kAudioTrackId);
  CHECK((audio_only.trafs[0].tfhd_flags & 0x20) != 0);  // the flags once, as a default
  check_round_trip(audio_only.trafs[0], as, false);
  CHECK(audio_only.trafs[0].samples[0].offset == audio_only.mdat_payload_offset);

  // A part of a single sample works as well as a whole segment.
  const Buffer one_bytes = fragment(5, vs.subspan(1, 1), {});
  const Fragment one = fragment_of(one_bytes);
  REQUIRE(one.trafs.size() == 1);
  check_round_trip(one.trafs[0], vs.subspan(1, 1), true);
}

TEST_CASE("fragment: refused inputs") {
  CHECK(fragment(1, {}, {}).empty());
  // 2049 samples of 1 MiB (one buffer, many spans): past kMaxFragmentBytes, refused before any
  // byte is copied.
  const Buffer mib(1u << 20, 0x55);
  std::vector<hls::Sample> many(2049);
  for (hls::Sample& s : many) {
    s.video = true;
    s.duration = 3000;
    s.data = mib;
  }
  CHECK(fragment(1, many, {}).empty());
  CHECK(fragment(1, {}, many).empty());
  CHECK(fragment(1, std::span(many).first(1024), std::span(many).first(1024)).empty());
  // Fewer of them fit (64 MiB: a test should not need gigabytes).
  const Buffer some = fragment(1, std::span(many).first(64), {});
  CHECK(some.size() > 64u << 20);
  CHECK(fragment_of(some).trafs.at(0).samples.size() == 64);
}
