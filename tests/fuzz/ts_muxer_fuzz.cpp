// TsMuxer (media/ts/) on a stream setup and samples taken from arbitrary bytes: no crash, no read
// out of bounds, and the output re-parsed by the strict demuxer of tests/unit/media/ts/ts_demux.hpp
// has no error at all (whole 188-byte packets with 0x47, continuity counters that never jump,
// PAT/PMT CRCs, exact PES lengths, stuffing), one PES per sample that wrote anything, with that
// sample's PTS/DTS (33 bits), a PCR equal to the DTS on the PCR PID, random_access_indicator on
// keyframes, an AUD first in every video access unit and the exact ADTS frame for audio.
//
// Input:
//   byte 0    bits 0-1 video codec (0 none, 1 AVC, 2 HEVC, 3 AVC), bit 2 AAC audio
//   byte 1    video config length, byte 2 audio config length
//   bytes 3-7 the first dts, 40 bits big-endian (so that the 33-bit wrap is reached)
//   the video config, then the audio config (avcC / hvcC, AudioSpecificConfig; maybe garbage)
//   then up to kMaxSamples records: flags (bit 0 video, bit 1 keyframe, bit 2 write the tables
//   first: a new segment), dts delta u16be, cts s16be, size u16be, then that many data bytes (or
//   what is left).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <vector>

#include "media/hls/sample.hpp"
#include "media/ts/ts_muxer.hpp"
#include "tests/unit/media/ts/ts_demux.hpp"
#include "tests/fuzz/fuzz_input.hpp"

using namespace sluice::media;

namespace {

constexpr size_t kMaxSamples = 256;

struct Expected {
  uint16_t pid;
  uint64_t pts;
  uint64_t dts;
  bool keyframe;
  std::span<const uint8_t> data;  // audio: the sample
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  sluice::fuzz::FuzzInput r{std::span(data, size)};
  const uint8_t setup_byte = static_cast<uint8_t>(r.be(1));
  const size_t video_config = r.be(1);
  const size_t audio_config = r.be(1);
  uint64_t dts = r.be(5);
  hls::StreamSetup setup;
  static constexpr hls::Codec kVideo[] = {hls::Codec::None, hls::Codec::Avc, hls::Codec::Hevc, hls::Codec::Avc};
  setup.video.codec = kVideo[setup_byte & 3];
  const auto vc = r.bytes(video_config);
  setup.video.config.assign(vc.begin(), vc.end());
  if (setup_byte & 4) setup.audio.codec = hls::Codec::Aac;
  const auto ac = r.bytes(audio_config);
  setup.audio.config.assign(ac.begin(), ac.end());

  ts::TsMuxer muxer(setup);
  std::vector<uint8_t> out;
  std::vector<Expected> expected;
  muxer.write_tables(out);
  for (size_t n = 0; n < kMaxSamples && r.left() > 0; ++n) {
    const uint8_t flags = static_cast<uint8_t>(r.be(1));
    dts += r.be(2);
    hls::Sample s;
    s.video = flags & 1;
    s.keyframe = flags & 2;
    s.dts = dts;
    s.cts = static_cast<int16_t>(r.be(2));
    s.data = r.bytes(r.be(2));
    if (flags & 4) muxer.write_tables(out);
    const size_t before = out.size();
    muxer.write_sample(s, out);
    if (out.size() == before) continue;
    const uint64_t d = s.dts & ts::kTimestampMask;
    const uint64_t p = s.video ? (s.dts + static_cast<uint64_t>(int64_t{s.cts})) & ts::kTimestampMask : d;
    expected.push_back({s.video ? ts::kVideoPid : ts::kAudioPid, p, d, s.keyframe || !s.video, s.data});
  }

  FUZZ_CHECK(out.size() % ts::kPacketSize == 0);
  sluice::test::ts::Demuxer demux;
  demux.feed(out);
  demux.flush();
  FUZZ_CHECK(demux.errors.empty());
  FUZZ_CHECK(demux.pcr_pid == muxer.pcr_pid());
  FUZZ_CHECK(demux.units.size() == expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    const auto& u = demux.units[i];
    const Expected& e = expected[i];
    FUZZ_CHECK(u.pid == e.pid);
    FUZZ_CHECK(u.has_pts && u.pts == e.pts && u.dts == e.dts);
    FUZZ_CHECK(u.has_dts == (e.pts != e.dts));
    FUZZ_CHECK(u.random_access == e.keyframe);
    FUZZ_CHECK(u.has_pcr == (u.pid == muxer.pcr_pid()));
    FUZZ_CHECK(!u.has_pcr || (u.pcr_base == e.dts && u.pcr_ext == 0));
    if (u.pid == ts::kVideoPid) {
      FUZZ_CHECK(u.stream_id == ts::kVideoStreamId);
      FUZZ_CHECK(u.bytes.size() >= 6 && u.bytes[0] == 0 && u.bytes[1] == 0 && u.bytes[2] == 0 && u.bytes[3] == 1);
      const bool hevc = setup.video.codec == hls::Codec::Hevc;
      FUZZ_CHECK(hevc ? ((u.bytes[4] >> 1) & 0x3F) == 35 : (u.bytes[4] & 0x1F) == 9);
    } else {
      FUZZ_CHECK(u.stream_id == ts::kAudioStreamId);
      const bool passed_through = ts::starts_with_adts(e.data);
      const size_t header = passed_through ? 0 : ts::kAdtsHeaderSize;
      FUZZ_CHECK(u.bytes.size() == header + e.data.size());
      FUZZ_CHECK(std::equal(e.data.begin(), e.data.end(), u.bytes.begin() + static_cast<std::ptrdiff_t>(header)));
      if (!passed_through) FUZZ_CHECK(sluice::test::ts::parse_adts(u.bytes)->frame_length == u.bytes.size());
    }
  }
  return 0;
}
