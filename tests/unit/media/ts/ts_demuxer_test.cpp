// TsDemuxer (media/ts/ts_demuxer.hpp) and NalPacker (media/codec/nal_packer.hpp): what TsMuxer
// writes comes back as the FLV tag bodies the hub carries, byte for byte; timestamps, continuity
// errors, damaged input and the limits.
#include <doctest/doctest.h>

#include <vector>

#include "media/codec/config_record.hpp"
#include "media/codec/nal_packer.hpp"
#include "media/ts/ts_demuxer.hpp"
#include "media/ts/ts_muxer.hpp"
#include "tests/unit/media/ts/ts_fixtures.hpp"

using namespace sluice::media;
using namespace sluice::media::ts;
using namespace sluice::test::ts_fixtures;
using sluice::test::be24;

namespace {

using Frames = std::vector<TsDemuxer::Frame>;

// Demuxes `ts` fed `chunk` bytes at a time, then flushed.
Frames demux(const Bytes& ts, size_t chunk = 1316, TsDemuxer* d = nullptr) {
  TsDemuxer own;
  TsDemuxer& demuxer = d ? *d : own;
  Frames out;
  for (size_t i = 0; i < ts.size(); i += chunk) {
    const size_t n = std::min(chunk, ts.size() - i);
    REQUIRE(demuxer.feed(std::span<const uint8_t>(ts).subspan(i, n), out).ok());
  }
  demuxer.flush(out);
  return out;
}

Bytes avc_record_high() { return cat({avc_record(), hex("fd f8 f8 00")}); }

Frames of_type(const Frames& all, uint8_t type) {
  Frames out;
  for (const auto& f : all) {
    if (f.type == type) out.push_back(f);
  }
  return out;
}

}  // namespace

TEST_CASE("TsDemuxer: H.264 and AAC from TsMuxer come back as FLV bodies") {
  TsMuxer m(avc_aac());
  const Bytes sei = nal(0x06, 20), idr = nal(0x65, 3000), slice = nal(0x41, 500, 3);
  const Bytes aac1 = nal(0x21, 200, 5), aac2 = nal(0x21, 180, 7);
  Bytes ts;
  m.write_tables(ts);
  m.write_sample(video(avcc({sei, idr}), 0, 3600, true), ts);
  m.write_sample(audio(aac1, 0), ts);
  m.write_sample(video(avcc({slice}), 3600, 3600), ts);
  m.write_sample(audio(aac2, 2090), ts);

  for (size_t chunk : {size_t{1316}, size_t{100}, size_t{1}}) {
    CAPTURE(chunk);
    TsDemuxer d;
    const Frames out = demux(ts, chunk, &d);
    const Frames v = of_type(out, 9), a = of_type(out, 8);
    REQUIRE(v.size() == 3);
    // The parameter sets the muxer put in front of the keyframe make the sequence header (a High
    // profile record has the chroma format and bit depth fields); AUD, SPS and PPS leave the frame.
    CHECK(v[0].body == cat({hex("17 00 000000"), avc_record_high()}));
    CHECK(v[0].timestamp == 1000);
    CHECK(v[1].body == cat({hex("17 01"), be24(40), avcc({sei, idr})}));
    CHECK(v[1].timestamp == 1000);
    CHECK(v[2].body == cat({hex("27 01"), be24(40), avcc({slice})}));
    CHECK(v[2].timestamp == 1040);
    REQUIRE(a.size() == 3);
    CHECK(a[0].body == cat({hex("af 00"), kAscLc44Stereo}));
    CHECK(a[1].body == cat({hex("af 01"), aac1}));
    CHECK(a[1].timestamp == 1000);
    CHECK(a[2].body == cat({hex("af 01"), aac2}));
    CHECK(a[2].timestamp == 1023);  // 2090 ticks
    CHECK(d.video_codec() == VideoCodec::Avc);
    CHECK(d.audio_codec() == AudioCodec::Aac);
    CHECK(d.stats().continuity_errors == 0);
    CHECK(d.stats().dropped_frames == 0);
  }
}

TEST_CASE("TsDemuxer: HEVC gets an Enhanced RTMP sequence start and coded frames") {
  hls::StreamSetup setup;
  setup.video.codec = hls::Codec::Hevc;
  setup.video.config = hevc_record({hevc_array(32, kHevcVps), hevc_array(33, kHevcSps), hevc_array(34, kHevcPps)});
  TsMuxer m(setup);
  const Bytes idr = cat({hex("2601"), nal(0xAF, 800)});  // IDR_W_RADL
  const Bytes trail = cat({hex("0201"), nal(0xAF, 300)});
  Bytes ts;
  m.write_tables(ts);
  m.write_sample(video(avcc({idr}), 90000, 0, true), ts);
  m.write_sample(video(avcc({trail}), 93600, 7200), ts);
  const Frames v = of_type(demux(ts), 9);
  REQUIRE(v.size() == 3);
  // The record built from the parameter sets is the one the muxer was given.
  CHECK(v[0].body == cat({hex("90 68766331"), setup.video.config}));
  CHECK(v[1].body == cat({hex("93 68766331"), avcc({idr})}));  // CodedFramesX: no composition offset
  CHECK(v[2].body == cat({hex("a1 68766331"), be24(80), avcc({trail})}));
  CHECK(v[2].timestamp - v[1].timestamp == 40);
}

TEST_CASE("TsDemuxer: timestamps unwrap past 2^33 and keep rising") {
  TsMuxer m(avc_aac());
  const uint64_t wrap = uint64_t{1} << 33;
  Bytes ts;
  m.write_tables(ts);
  m.write_sample(video(avcc({nal(0x65, 100)}), wrap - 3600, 0, true), ts);
  m.write_sample(video(avcc({nal(0x41, 100)}), wrap, 0), ts);  // written as 0
  m.write_sample(video(avcc({nal(0x41, 100)}), wrap + 3600, 0), ts);
  const Frames v = of_type(demux(ts), 9);
  REQUIRE(v.size() == 4);
  CHECK(v[1].timestamp == 1000);
  CHECK(v[2].timestamp == 1040);
  CHECK(v[3].timestamp == 1080);
}

TEST_CASE("TsDemuxer: a lost packet drops its PES only; repeated packets are ignored") {
  TsMuxer m(avc_aac());
  Bytes ts;
  m.write_tables(ts);
  m.write_sample(video(avcc({nal(0x65, 1000)}), 0, 0, true), ts);
  const size_t before_big = ts.size();
  m.write_sample(video(avcc({nal(0x41, 1000, 9)}), 3600, 0), ts);  // 6 packets
  const size_t after_big = ts.size();
  m.write_sample(video(avcc({nal(0x41, 100, 4)}), 7200, 0), ts);
  m.write_sample(video(avcc({nal(0x41, 100, 5)}), 10800, 0), ts);

  SUBCASE("a packet in the middle of a PES is lost") {
    Bytes lossy(ts.begin(), ts.begin() + static_cast<ptrdiff_t>(before_big + 2 * kPacketSize));
    lossy.insert(lossy.end(), ts.begin() + static_cast<ptrdiff_t>(before_big + 3 * kPacketSize), ts.end());
    TsDemuxer d;
    const Frames v = of_type(demux(lossy, 1316, &d), 9);
    REQUIRE(v.size() == 4);  // the header, the keyframe, then the two after the damaged one
    CHECK(v[2].timestamp == 1080);
    CHECK(v[3].timestamp == 1120);
    CHECK(d.stats().continuity_errors == 1);
  }
  SUBCASE("a packet sent twice") {
    Bytes doubled(ts.begin(), ts.begin() + static_cast<ptrdiff_t>(before_big + kPacketSize));
    doubled.insert(doubled.end(), ts.begin() + static_cast<ptrdiff_t>(before_big),
                   ts.begin() + static_cast<ptrdiff_t>(after_big));
    doubled.insert(doubled.end(), ts.begin() + static_cast<ptrdiff_t>(after_big), ts.end());
    TsDemuxer d;
    const Frames v = of_type(demux(doubled, 1316, &d), 9);
    CHECK(v.size() == 5);
    CHECK(d.stats().continuity_errors == 0);
  }
}

TEST_CASE("TsDemuxer: what it cannot use is counted, not an error") {
  TsMuxer m(avc_aac());
  Bytes ts;
  m.write_tables(ts);
  m.write_sample(video(avcc({nal(0x41, 100)}), 0, 0), ts);  // no parameter sets yet: undecodable
  m.write_sample(video(avcc({nal(0x65, 100)}), 3600, 0, true), ts);
  Bytes damaged(ts.begin(), ts.begin() + static_cast<ptrdiff_t>(kPacketSize));
  damaged[10] ^= 0x55;             // the PAT's CRC no longer checks
  Bytes stray(kPacketSize, 0xFF);  // a packet on PID 0x0777 nobody announced
  stray[0] = 0x47;
  stray[1] = 0x47;
  stray[2] = 0x77;
  stray[3] = 0x10;
  Bytes input = cat({damaged, stray, ts});
  TsDemuxer d;
  const Frames v = of_type(demux(input, 1316, &d), 9);
  REQUIRE(v.size() == 2);  // the sequence header and the keyframe
  CHECK(v[1].timestamp == 1040);
  CHECK(d.stats().dropped_frames == 1);
  CHECK(d.stats().bad_sections == 1);
}

TEST_CASE("TsDemuxer: input that is no transport stream, or a PES past the limit, is an error") {
  Frames out;
  SUBCASE("no sync byte") {
    TsDemuxer d;
    const Bytes garbage(4 * kPacketSize, 0x00);
    auto r = d.feed(garbage, out);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().context.find("sync") != std::string::npos);
  }
  SUBCASE("an adaptation field longer than its packet") {
    Bytes p(kPacketSize, 0xFF);
    p[0] = 0x47;
    p[3] = 0x30;
    p[4] = 184;
    TsDemuxer d;
    CHECK_FALSE(d.feed(p, out).ok());
  }
  SUBCASE("a PES longer than Limits::max_pes_bytes") {
    TsMuxer m(avc_aac());
    Bytes ts;
    m.write_tables(ts);
    m.write_sample(video(avcc({nal(0x65, 5000)}), 0, 0, true), ts);
    TsDemuxer d(TsDemuxer::Limits{4000});
    auto r = d.feed(ts, out);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == sluice::Errc::LimitExceeded);
  }
}

TEST_CASE("split_annexb: start codes of 3 and 4 bytes, trailing zeros, bytes before the first") {
  const Bytes stream = hex("ff ee 00000001 0901 000001 6501020300 0000 00000001 41aa");
  const NalList nals = split_annexb(stream);
  REQUIRE(nals.size() == 3);
  CHECK(Bytes(nals[0].begin(), nals[0].end()) == hex("0901"));
  CHECK(Bytes(nals[1].begin(), nals[1].end()) == hex("65010203"));
  CHECK(Bytes(nals[2].begin(), nals[2].end()) == hex("41aa"));
  CHECK(split_annexb(hex("00 00 02 01")).empty());
}

TEST_CASE("NalPacker: a new sequence header when the parameter sets change, none when they repeat") {
  NalPacker p(VideoCodec::Avc);
  std::vector<NalPacker::Body> out;
  const Bytes idr = nal(0x65, 50), slice = nal(0x41, 30), filler = nal(0x0C, 10);
  p.pack({kSps, kPps, idr}, 0, out);
  p.pack({hex("09f0"), slice, filler}, 0, out);  // AUD and filler data leave the frame
  p.pack({kSps, kPps, idr}, 0, out);             // the same sets again: no new header
  const Bytes other_pps = hex("68ee3cb0");
  p.pack({kSps, other_pps, idr}, 0, out);
  REQUIRE(out.size() == 6);
  CHECK(out[0].sequence_header);
  CHECK(out[1].keyframe);
  CHECK(out[2].bytes == cat({hex("27 01 000000"), avcc({slice})}));
  CHECK_FALSE(out[3].sequence_header);
  CHECK(out[4].sequence_header);
  auto record = avc_decoder_config({kSps}, {other_pps});
  REQUIRE(record);
  CHECK(out[4].bytes == cat({hex("17 00 000000"), *record}));
  CHECK(p.dropped() == 0);
  p.pack({hex("0930")}, 0, out);  // nothing to decode
  CHECK(p.dropped() == 1);
}
