// TsMuxer (media/ts/): exact bytes of the PSI tables and of the converted access units, and a
// round trip through the strict demuxer of ts_demux.hpp. The H.264 and HEVC parameter sets are
// the x264/x265 ones of tests/unit/media/codec_test.cpp. The PAT and PMT bytes are the ones
// ffmpeg's mpegts muxer writes for the same program (its CRCs were checked independently).
#include <doctest/doctest.h>

#include <string_view>
#include <vector>

#include "unit/test_bytes.hpp"
#include "media/ts/adts.hpp"
#include "media/ts/annexb.hpp"
#include "media/ts/crc32.hpp"
#include "media/ts/ts_muxer.hpp"
#include "tests/unit/media/ts/ts_demux.hpp"
#include "tests/unit/media/ts/ts_fixtures.hpp"

using namespace sluice::media;
using namespace sluice::media::ts;
using sluice::test::be16;
using sluice::test::be24;
using sluice::test::be32;
using sluice::test::Bytes;
using sluice::test::cat;
using sluice::test::hex;
using sluice::test::ts::Demuxer;
using sluice::test::ts::EsUnit;
using sluice::test::ts::parse_adts;
using sluice::test::ts::split_annexb;
using namespace sluice::test::ts_fixtures;

namespace {

// Demuxes `ts` (which must start with the tables) and requires no errors.
Demuxer demux(const Bytes& ts) {
  Demuxer d;
  d.feed(ts);
  d.flush();
  for (const auto& e : d.errors) INFO(e);
  CHECK(d.errors.empty());
  return d;
}

// The one unit of a muxer fed the tables and one sample.
EsUnit mux_one(const hls::StreamSetup& setup, const hls::Sample& s) {
  TsMuxer m(setup);
  Bytes out;
  m.write_tables(out);
  m.write_sample(s, out);
  Demuxer d = demux(out);
  REQUIRE(d.units.size() == 1);
  return d.units[0];
}

}  // namespace

TEST_CASE("TsMuxer: CRC_32 of MPEG-2 sections") {
  CHECK(crc32_mpeg2(hex("00b00d0001c100000001f000")) == 0x2AB104B2u);
  CHECK(crc32_mpeg2({}) == 0xFFFFFFFFu);
  const Bytes with_crc = hex("00b00d0001c100000001f000 2ab104b2");
  CHECK(crc32_mpeg2(with_crc) == 0);
  CHECK(Demuxer::crc32(with_crc) == 0);
}

TEST_CASE("TsMuxer: PAT and PMT bytes") {
  TsMuxer m(avc_aac());
  Bytes out;
  m.write_tables(out);
  REQUIRE(out.size() == 2 * kPacketSize);
  const Bytes pat = hex("474000 10 00 00b00d0001c100000001f000 2ab104b2");
  const Bytes pmt = hex("475000 10 00 02b0170001c10000e100f0001be100f0000fe101f000 2f44b99b");
  CHECK(Bytes(out.begin(), out.begin() + long(pat.size())) == pat);
  CHECK(Bytes(out.begin() + 188, out.begin() + 188 + long(pmt.size())) == pmt);
  for (size_t i = pat.size(); i < 188; ++i) CHECK(out[i] == 0xFF);
  for (size_t i = 188 + pmt.size(); i < 376; ++i) CHECK(out[i] == 0xFF);

  Demuxer d = demux(out);
  CHECK(d.pat_count == 1);
  CHECK(d.pmt_count == 1);
  CHECK(d.transport_stream_id == 1);
  CHECK(d.program_number == 1);
  CHECK(d.pmt_pid == 0x1000);
  CHECK(d.pcr_pid == 0x100);
  REQUIRE(d.streams.size() == 2);
  CHECK(d.streams[0].stream_type == 0x1B);
  CHECK(d.streams[0].pid == 0x100);
  CHECK(d.streams[1].stream_type == 0x0F);
  CHECK(d.streams[1].pid == 0x101);

  SUBCASE("a corrupted PMT fails the CRC") {
    out[188 + 10] ^= 1;
    Demuxer bad;
    bad.feed(out);
    CHECK(bad.errors.size() == 1);
  }
}

TEST_CASE("TsMuxer: tracks that are None are left out, PCR follows") {
  hls::StreamSetup s = avc_aac();
  SUBCASE("HEVC only") {
    s.video.codec = hls::Codec::Hevc;
    s.audio = {};
    Demuxer d = demux([&] {
      Bytes o;
      TsMuxer(s).write_tables(o);
      return o;
    }());
    REQUIRE(d.streams.size() == 1);
    CHECK(d.streams[0].stream_type == 0x24);
    CHECK(d.pcr_pid == 0x100);
  }
  SUBCASE("audio only: PCR on the audio PID, in every audio PES") {
    s.video = {};
    TsMuxer m(s);
    CHECK(m.pcr_pid() == kAudioPid);
    Bytes o;
    m.write_tables(o);
    const Bytes frame = nal(0x21, 300);
    m.write_sample(audio(frame, 9000), o);
    m.write_sample(audio(frame, 11089), o);
    m.write_sample(video(avcc({nal(0x65, 50)}), 9000, 0, true), o);  // no video track: dropped
    Demuxer d = demux(o);
    REQUIRE(d.streams.size() == 1);
    CHECK(d.streams[0].pid == 0x101);
    CHECK(d.pcr_pid == 0x101);
    REQUIRE(d.units.size() == 2);
    CHECK(d.units[1].has_pcr);
    CHECK(d.units[1].pcr_base == 11089);
    CHECK(d.units[1].random_access);
  }
  SUBCASE("nothing") {
    s = {};
    Demuxer d = demux([&] {
      Bytes o;
      TsMuxer(s).write_tables(o);
      return o;
    }());
    CHECK(d.streams.empty());
    CHECK(d.pcr_pid == 0x1FFF);
  }
}

TEST_CASE("TsMuxer: H.264 access units in Annex B") {
  const hls::StreamSetup setup = avc_aac();
  const Bytes sei = nal(0x06, 20);
  const Bytes idr = nal(0x65, 1000);
  const Bytes slice = nal(0x41, 500);

  SUBCASE("keyframe: AUD, SPS, PPS, then the NAL units") {
    const Bytes data = avcc({sei, idr});
    const EsUnit u = mux_one(setup, video(data, 1000, 0, true));
    CHECK(u.bytes == cat({kAvcAud, kStart, kSps, kStart, kPps, kStart, sei, kStart, idr}));
    CHECK(u.stream_id == 0xE0);
    CHECK(u.stream_type == 0x1B);
    CHECK(u.random_access);
    CHECK(u.has_pcr);
    CHECK(u.pcr_base == 1000);
    CHECK(u.pcr_ext == 0);
    CHECK(u.pes_length == 3 + 5 + u.bytes.size());
  }
  SUBCASE("inter frame: only the AUD is added") {
    const EsUnit u = mux_one(setup, video(avcc({slice}), 1000));
    CHECK(u.bytes == cat({kAvcAud, kStart, slice}));
    CHECK_FALSE(u.random_access);
    CHECK(u.has_pcr);
  }
  SUBCASE("an AUD already first, a keyframe with its own SPS") {
    const Bytes aud = hex("09f0");
    const Bytes own_sps = cat({kSps, hex("aa")});
    const EsUnit u = mux_one(setup, video(avcc({aud, own_sps, kPps, idr}), 0, 0, true));
    CHECK(u.bytes == cat({kStart, aud, kStart, own_sps, kStart, kPps, kStart, idr}));
  }
  SUBCASE("an AUD already first, a keyframe without SPS: the parameter sets go after the AUD") {
    const Bytes aud = hex("0930");
    const EsUnit u = mux_one(setup, video(avcc({aud, sei, idr}), 0, 0, true));
    CHECK(u.bytes == cat({kStart, aud, kStart, kSps, kStart, kPps, kStart, sei, kStart, idr}));
  }
  SUBCASE("an AUD cut after its header is not taken for one: a whole AUD goes in front") {
    const Bytes cut = hex("09");
    CHECK(mux_one(setup, video(avcc({cut, slice}), 0)).bytes == cat({kAvcAud, kStart, cut, kStart, slice}));
  }
  SUBCASE("2-byte NAL lengths from lengthSizeMinusOne 1") {
    hls::StreamSetup s = setup;
    s.video.config[4] = 0xFD;
    const Bytes data = cat({be16(slice.size()), slice, be16(sei.size()), sei});
    CHECK(mux_one(s, video(data, 0)).bytes == cat({kAvcAud, kStart, slice, kStart, sei}));
  }
  SUBCASE("a NAL length past the end ends the access unit; empty NAL units are dropped") {
    const Bytes data = cat({be32(0), be32(slice.size()), slice, be32(100), hex("6501020304")});
    CHECK(mux_one(setup, video(data, 0)).bytes == cat({kAvcAud, kStart, slice}));
  }
  SUBCASE("a record that does not parse gives no parameter sets") {
    hls::StreamSetup s = setup;
    s.video.config.resize(12);  // inside the SPS
    CHECK(mux_one(s, video(avcc({idr}), 0, 0, true)).bytes == cat({kAvcAud, kStart, idr}));
    s.video.config = avc_record();
    s.video.config[0] = 0;  // configurationVersion 0
    CHECK(mux_one(s, video(avcc({idr}), 0, 0, true)).bytes == cat({kAvcAud, kStart, idr}));
  }
  SUBCASE("samples without a NAL unit write nothing") {
    TsMuxer m(setup);
    Bytes out;
    m.write_sample(video({}, 0, 0, true), out);
    m.write_sample(video(hex("000000"), 0), out);
    m.write_sample(video(hex("ffffffff 65"), 0), out);
    m.write_sample(video(be32(0), 0), out);
    m.write_sample(audio({}, 0), out);
    CHECK(out.empty());
  }
}

TEST_CASE("TsMuxer: HEVC access units get VPS, SPS, PPS in that order") {
  hls::StreamSetup setup;
  setup.video.codec = hls::Codec::Hevc;
  const Bytes vps = hevc_array(32, kHevcVps), sps = hevc_array(33, kHevcSps), pps = hevc_array(34, kHevcPps);
  const Bytes sei_array = hevc_array(39, hex("4e01 0504 01020304 80"));
  const Bytes idr = cat({hex("2601"), nal(0xAF, 800)});    // IDR_W_RADL
  const Bytes trail = cat({hex("0201"), nal(0xD0, 300)});  // TRAIL_R
  for (const Bytes& record : {hevc_record({vps, sps, pps}), hevc_record({pps, sei_array, sps, vps})}) {
    setup.video.config = record;
    CHECK(mux_one(setup, video(avcc({idr}), 3600, 0, true)).bytes ==
          cat({kHevcAud, kStart, kHevcVps, kStart, kHevcSps, kStart, kHevcPps, kStart, idr}));
    const EsUnit u = mux_one(setup, video(avcc({trail}), 3600, 7200));
    CHECK(u.bytes == cat({kHevcAud, kStart, trail}));
    CHECK(u.stream_type == 0x24);
    // A keyframe with its own AUD gets the parameter sets behind it; with its own VPS/SPS/PPS
    // too it is copied as it is.
    const Bytes aud = hex("460150");
    CHECK(mux_one(setup, video(avcc({aud, idr}), 0, 0, true)).bytes ==
          cat({kStart, aud, kStart, kHevcVps, kStart, kHevcSps, kStart, kHevcPps, kStart, idr}));
    CHECK(mux_one(setup, video(avcc({aud, kHevcVps, kHevcSps, kHevcPps, idr}), 0, 0, true)).bytes ==
          cat({kStart, aud, kStart, kHevcVps, kStart, kHevcSps, kStart, kHevcPps, kStart, idr}));
    // A 1-byte NAL unit is shorter than the HEVC NAL header: dropped, even one that reads as an
    // AUD (it must not stand in for the AUD a player looks for first).
    CHECK(mux_one(setup, video(avcc({hex("46"), trail}), 0)).bytes == cat({kHevcAud, kStart, trail}));
  }
}

TEST_CASE("TsMuxer: malformed HEVC records give no parameter sets") {
  const Bytes idr = cat({hex("2601"), nal(0xAF, 100)});
  Bytes record = hevc_record({hevc_array(32, kHevcVps), hevc_array(33, kHevcSps), hevc_array(34, kHevcPps)});
  hls::StreamSetup setup;
  setup.video.codec = hls::Codec::Hevc;
  for (size_t cut : {size_t{0}, size_t{10}, size_t{23}, size_t{30}, record.size() - 1}) {
    CAPTURE(cut);
    setup.video.config.assign(record.begin(), record.begin() + long(cut));
    CHECK(mux_one(setup, video(avcc({idr}), 0, 0, true)).bytes == cat({kHevcAud, kStart, idr}));
  }
  record[22] = 0xFF;  // numOfArrays past the record
  setup.video.config = record;
  CHECK(mux_one(setup, video(avcc({idr}), 0, 0, true)).bytes == cat({kHevcAud, kStart, idr}));
}

TEST_CASE("TsMuxer: AAC gets an ADTS header") {
  hls::StreamSetup setup = avc_aac();
  const Bytes frame = nal(0x21, 371);

  SUBCASE("AAC-LC 44.1 kHz stereo: every field") {
    const EsUnit u = mux_one(setup, audio(frame, 90000));
    CHECK(u.stream_id == 0xC0);
    CHECK(u.stream_type == 0x0F);
    CHECK_FALSE(u.has_dts);
    CHECK(u.pts == 90000);
    CHECK_FALSE(u.has_pcr);  // PCR is on the video PID
    CHECK(u.random_access);
    CHECK(u.pes_length == 3 + 5 + 7 + frame.size());
    REQUIRE(u.bytes.size() == 7 + frame.size());
    CHECK(Bytes(u.bytes.begin() + 7, u.bytes.end()) == frame);
    const auto a = parse_adts(u.bytes);
    REQUIRE(a);
    CHECK_FALSE(a->mpeg2);
    CHECK(a->layer == 0);
    CHECK(a->protection_absent);
    CHECK(a->profile == 1);
    CHECK(a->sampling_index == 4);
    CHECK(a->channel_config == 2);
    CHECK(a->frame_length == 7 + frame.size());
    CHECK(a->buffer_fullness == 0x7FF);
    CHECK(a->raw_blocks == 0);
    // 378 = 0x17A: the 13-bit length across bytes 3..5.
    CHECK(Bytes(u.bytes.begin(), u.bytes.begin() + 7) == hex("fff1 50 80 2f 5f fc"));
  }
  SUBCASE("HE-AAC with explicit SBR: the core object type and rate") {
    setup.audio.config = hex("2b118800");  // AOT 5, 24 kHz, stereo, ext 48 kHz, core AOT 2
    const auto a = parse_adts(mux_one(setup, audio(frame, 0)).bytes);
    REQUIRE(a);
    CHECK(a->profile == 1);
    CHECK(a->sampling_index == 6);
    CHECK(a->channel_config == 2);
  }
  SUBCASE("explicit frequency, mono, AAC Main") {
    setup.audio.config = hex("0f 80 55 f0 08");  // AOT 1, index 15, 44000 Hz, channels 1
    const auto a = parse_adts(mux_one(setup, audio(frame, 0)).bytes);
    REQUIRE(a);
    CHECK(a->profile == 0);
    CHECK(a->sampling_index == 4);
    CHECK(a->channel_config == 1);
  }
  SUBCASE("object types past LTP are clamped") {
    setup.audio.config = hex("b9 90");  // AOT 23 (LD), 48 kHz, stereo
    CHECK(adts_config(setup.audio).profile == 3);
    CHECK(adts_config(setup.audio).sampling_index == 3);
  }
  SUBCASE("a garbage ASC falls back on the setup's fields") {
    setup.audio.config = hex("00");
    setup.audio.sample_rate = 22050;
    setup.audio.channels = 1;
    setup.audio.object_type = 2;
    const AdtsConfig c = adts_config(setup.audio);
    CHECK(c.profile == 1);
    CHECK(c.sampling_index == 7);
    CHECK(c.channel_config == 1);
  }
  SUBCASE("a sample that already is ADTS passes through") {
    const Bytes adts = cat({hex("fff1 50 80 2f 5f fc"), frame});
    CHECK(mux_one(setup, audio(adts, 0)).bytes == adts);
  }
  SUBCASE("a frame too long for ADTS is dropped") {
    TsMuxer m(setup);
    Bytes out;
    const Bytes huge(kMaxAdtsPayload + 1, 0x21);
    m.write_sample(audio(huge, 0), out);
    CHECK(out.empty());
    m.write_sample(audio(Bytes(kMaxAdtsPayload, 0x21), 0), out);
    CHECK(out.size() > kMaxAdtsPayload);
  }
  CHECK(nearest_sampling_index(96000) == 0);
  CHECK(nearest_sampling_index(1000000) == 0);
  CHECK(nearest_sampling_index(0) == 12);
  CHECK(nearest_sampling_index(46000) == 4);
  CHECK(nearest_sampling_index(47000) == 3);
}

TEST_CASE("TsMuxer: timestamps") {
  const hls::StreamSetup setup = avc_aac();
  const Bytes data = avcc({nal(0x41, 100)});
  SUBCASE("pts = dts + cts, DTS only when they differ") {
    EsUnit u = mux_one(setup, video(data, 123456, 3600));
    CHECK(u.has_dts);
    CHECK(u.dts == 123456);
    CHECK(u.pts == 123456 + 3600);
    CHECK(u.pcr_base == 123456);
    u = mux_one(setup, video(data, 123456, 0));
    CHECK_FALSE(u.has_dts);
    CHECK(u.pts == 123456);
  }
  SUBCASE("33-bit wrap") {
    const uint64_t wrap = uint64_t{1} << 33;
    EsUnit u = mux_one(setup, video(data, wrap - 10, 20));
    CHECK(u.dts == wrap - 10);
    CHECK(u.pts == 10);
    CHECK(u.pcr_base == wrap - 10);
    u = mux_one(setup, video(data, 3 * wrap + 5, 0));
    CHECK(u.pts == 5);
    CHECK_FALSE(u.has_dts);  // equal after the wrap
    CHECK(u.pcr_base == 5);
    u = mux_one(setup, audio(nal(0x21, 10), wrap + 0x1ABCDEF01ull));
    CHECK(u.pts == 0x1ABCDEF01ull);
    u = mux_one(setup, video(data, 0, -90));  // never from FLV, still wraps
    CHECK(u.pts == wrap - 90);
    CHECK(u.dts == 0);
  }
}

TEST_CASE("TsMuxer: continuity counters run on across calls and segments") {
  TsMuxer m(avc_aac());
  Demuxer whole;
  std::vector<Bytes> segments;
  std::vector<Bytes> nals;  // what went in, video then audio per step
  const Bytes frame = nal(0x21, 200);
  uint64_t t = 0;
  for (int seg = 0; seg < 5; ++seg) {
    Bytes out;
    m.write_tables(out);
    for (int i = 0; i < 7; ++i, t += 3600) {
      const Bytes n = nal(i == 0 ? 0x65 : 0x41, 150 + size_t(seg * 977 + i * 131) % 3000, uint8_t(i));
      const Bytes data = avcc({n});
      m.write_sample(video(data, t, 3600, i == 0), out);
      m.write_sample(audio(frame, t), out);
    }
    segments.push_back(out);
  }
  // Each segment on its own (a demuxer per segment, as a player starting there), and all of them
  // back to back through one demuxer: counters continue, no discontinuity.
  for (const Bytes& s : segments) {
    CHECK(s.size() % kPacketSize == 0);
    demux(s);
    whole.feed(s);
  }
  whole.flush();
  for (const auto& e : whole.errors) INFO(e);
  CHECK(whole.errors.empty());
  CHECK(whole.pat_count == 5);
  CHECK(whole.units.size() == 70);
  CHECK(whole.packets_per_pid[0] == 5);
  CHECK(segments[1][3] == 0x11);             // the second PAT has counter 1
  CHECK(whole.packets_per_pid[0x100] > 16);  // the video counter wrapped
  for (const EsUnit& u : whole.units) {
    if (u.pid != 0x100) continue;
    CHECK(u.has_pcr);
    CHECK(u.pcr_base == u.dts);
  }

  SUBCASE("a lost packet is a discontinuity") {
    Bytes cut = segments[1];
    cut.erase(cut.begin() + 3 * 188, cut.begin() + 4 * 188);
    Demuxer d;
    d.feed(cut);
    CHECK_FALSE(d.errors.empty());
  }
}

TEST_CASE("TsMuxer: payloads round trip for every size around the packet boundaries") {
  const hls::StreamSetup setup = avc_aac();
  TsMuxer m(setup);
  Bytes out;
  m.write_tables(out);
  std::vector<Bytes> audio_in, video_in;
  for (size_t n = 1; n <= 600; ++n) {
    audio_in.push_back(nal(0x21, n, uint8_t(n)));
    video_in.push_back(nal(n % 3 == 0 ? 0x65 : 0x41, n, uint8_t(n)));
  }
  video_in.push_back(nal(0x41, 70000));           // PES_packet_length 0
  video_in.push_back(nal(0x41, 65535 - 8 - 10));  // exactly 0xFFFF
  uint64_t t = 0;
  for (const Bytes& a : audio_in) m.write_sample(audio(a, t += 1920), out);
  for (const Bytes& v : video_in) {
    const Bytes data = avcc({v});
    m.write_sample(video(data, t += 3000, 0, v[0] == 0x65), out);
  }
  Demuxer d = demux(out);
  REQUIRE(d.units.size() == audio_in.size() + video_in.size());
  for (size_t i = 0; i < audio_in.size(); ++i) {
    const EsUnit& u = d.units[i];
    CAPTURE(i);
    REQUIRE(u.bytes.size() > 7);
    CHECK(parse_adts(u.bytes)->frame_length == u.bytes.size());
    CHECK(Bytes(u.bytes.begin() + 7, u.bytes.end()) == audio_in[i]);
  }
  for (size_t i = 0; i < video_in.size(); ++i) {
    const EsUnit& u = d.units[audio_in.size() + i];
    CAPTURE(i);
    auto nals = split_annexb(u.bytes);
    REQUIRE(nals.size() >= 2);
    CHECK(nals.front() == hex("09f0"));
    CHECK(nals.back() == video_in[i]);
    CHECK(u.random_access == (video_in[i][0] == 0x65));
    CHECK(u.pes_length == (u.bytes.size() + 8 > 0xFFFF ? 0 : u.bytes.size() + 8));
  }
  CHECK(d.units.back().pes_length == 0xFFFF);
}
