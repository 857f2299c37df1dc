// What the MPEG-TS tests share (ts_muxer_test.cpp, ts_demuxer_test.cpp): the x264/x265 parameter
// sets of tests/unit/media/codec_test.cpp, their configuration records, and samples as the HLS
// muxers are fed them.
#pragma once

#include <cstdint>
#include <initializer_list>

#include "media/hls/sample.hpp"
#include "unit/test_bytes.hpp"

namespace sluice::test::ts_fixtures {

using sluice::test::be16;
using sluice::test::be32;
using sluice::test::Bytes;
using sluice::test::cat;
using sluice::test::hex;
namespace hls = sluice::media::hls;

inline const Bytes kStart = {0, 0, 0, 1};

inline const Bytes kSps = hex("6764001facd9405005bb011000000300100000030320f1831960");
inline const Bytes kPps = hex("68ebe3cb22c0");
inline const Bytes kHevcVps = hex("40010c01ffff016000000300900000030000030078959809");
inline const Bytes kHevcSps =
    hex("420101016000000300900000030000030078a003c08010e596566924caf0168080000003008000000c84");
inline const Bytes kHevcPps = hex("4401c172b46240");
inline const Bytes kAvcAud = hex("00000001 09f0");
inline const Bytes kHevcAud = hex("00000001 460150");
inline const Bytes kAscLc44Stereo = hex("1210");

inline Bytes avc_record() {
  return cat({hex("01 64 00 1f ff e1"), be16(kSps.size()), kSps, hex("01"), be16(kPps.size()), kPps});
}

inline Bytes hevc_array(uint8_t type, const Bytes& nal) {
  return cat({Bytes{uint8_t(0x80 | type)}, hex("0001"), be16(nal.size()), nal});
}

// The arrays in the order given; lengthSizeMinusOne 3.
inline Bytes hevc_record(std::initializer_list<Bytes> arrays) {
  Bytes r = hex("01 01 60000000 900000000000 78 f000 fc fd f8 f8 0000 0f");
  r.push_back(static_cast<uint8_t>(arrays.size()));
  for (const auto& a : arrays) r.insert(r.end(), a.begin(), a.end());
  return r;
}

// NAL units behind 4-byte lengths.
inline Bytes avcc(std::initializer_list<Bytes> nals) {
  Bytes out;
  for (const auto& n : nals) out = cat({out, be32(n.size()), n});
  return out;
}

// A NAL unit of `type` (H.264 header) and `size` bytes that never contains 00 00.
inline Bytes nal(uint8_t header, size_t size, uint8_t seed = 1) {
  Bytes n{header};
  for (size_t i = 1; i < size; ++i) n.push_back(static_cast<uint8_t>(1 + (seed + i * 7) % 255));
  return n;
}

inline hls::StreamSetup avc_aac() {
  hls::StreamSetup s;
  s.video.codec = hls::Codec::Avc;
  s.video.config = avc_record();
  s.audio.codec = hls::Codec::Aac;
  s.audio.config = kAscLc44Stereo;
  return s;
}

inline hls::Sample video(const Bytes& data, uint64_t dts, int32_t cts = 0, bool key = false) {
  hls::Sample s;
  s.video = true;
  s.keyframe = key;
  s.dts = dts;
  s.cts = cts;
  s.data = data;
  return s;
}

inline hls::Sample audio(const Bytes& data, uint64_t dts) {
  hls::Sample s;
  s.dts = dts;
  s.data = data;
  return s;
}

}  // namespace sluice::test::ts_fixtures
