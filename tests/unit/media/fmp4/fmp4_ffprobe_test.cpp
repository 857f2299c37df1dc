// media/fmp4/fmp4_writer against ffmpeg, run only with SLUICE_FMP4_FFPROBE set (tests/CMakeLists.txt sets it
// for the suite; it encodes video,
// which is slow under the sanitizers): an ffmpeg-made FLV (H.264 with B-frames + AAC; HEVC + AAC
// by way of an ffmpeg HEVC MP4, as ffmpeg 5 cannot write HEVC into FLV) is cut into LL-HLS-like
// parts (at every keyframe and every 5 video frames), written as init + fragments, and ffprobe
// must find in the result the source's packets (count, size, MD5, key flag, pts and dts: for
// H.264 the FLV's to the millisecond, the 90 kHz times being its exactly; for HEVC the source
// MP4's, shifted by its edit list and within 1 ms, as ffmpeg 5 does not read Enhanced RTMP FLV),
// the sample entries avc1/hvc1 and mp4a with a 1/90000 time base, and ffmpeg must decode it
// without a message. With SLUICE_FMP4_FFPROBE=/some/dir the files are also
// left there (<codec>-init.mp4, -out.mp4, -source.flv) for a look by hand.
#include <doctest/doctest.h>
#include <stdlib.h>

#include <cmath>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "media/codec/aac.hpp"
#include "media/codec/avc.hpp"
#include "media/codec/hevc.hpp"
#include "media/flv/flv_tag_head.hpp"
#include "media/fmp4/fmp4_writer.hpp"
#include "media/vod/flv_indexer.hpp"
#include "media/vod/mp4_demuxer.hpp"
#include "unit/media/index_flv.hpp"
#include "unit/media/ffprobe_packets.hpp"
#include "unit/media/tool_files.hpp"

using namespace sluice;
using namespace sluice::media;
using Buffer = std::vector<uint8_t>;
using sluice::test::ffmpeg;
using sluice::test::read_file;
using sluice::test::run;
using sluice::test::skipped_without;
using sluice::test::TempDir;
using sluice::test::write_file;

namespace {

const char* enabled() { return getenv("SLUICE_FMP4_FFPROBE"); }

struct Stream {
  hls::StreamSetup setup;
  std::vector<hls::Sample> video, audio;
};

// The body of an FLV sequence header past its codec header: the avcC/hvcC or the ASC.
std::span<const uint8_t> config_of(uint8_t type, std::span<const uint8_t> body) {
  const auto p =
      read_flv_tag_head(type, body.first(std::min(body.size(), kFlvTagHeadBytes)), static_cast<uint32_t>(body.size()));
  REQUIRE(p.kind == FlvPacketKind::Config);
  return body.subspan(p.prefix);
}

// What media/hls/sample_source.hpp makes of a live stream, from an FLV file: the setup from the
// sequence headers, the samples from the frames, durations to the next sample of the track.
Stream stream_of(const Buffer& flv) {
  auto index = vod::index_flv(flv);
  REQUIRE(index.ok());
  Stream s;
  REQUIRE(!index->video_sequence_header.empty());
  REQUIRE(!index->audio_sequence_header.empty());
  const auto vconf = config_of(vod::kSampleVideo, index->video_sequence_header);
  s.setup.video.config.assign(vconf.begin(), vconf.end());
  const bool hevc = index->video_codec == VideoCodec::Hevc;
  s.setup.video.codec = hevc ? hls::Codec::Hevc : hls::Codec::Avc;
  if (hevc) {
    auto c = parse_hevc_config(vconf);
    REQUIRE(c.ok());
    s.setup.video.width = c->width;
    s.setup.video.height = c->height;
  } else {
    auto c = parse_avc_config(vconf);
    REQUIRE(c.ok());
    s.setup.video.width = c->width;
    s.setup.video.height = c->height;
  }
  const auto asc = config_of(vod::kSampleAudio, index->audio_sequence_header);
  auto a = parse_aac_config(asc);
  REQUIRE(a.ok());
  s.setup.audio = {hls::Codec::Aac, Buffer(asc.begin(), asc.end()), 0, 0, a->sample_rate, a->channels, a->object_type};

  for (const vod::Sample& v : index->samples) {
    if (v.type == vod::kSampleScript) continue;
    REQUIRE(!v.sequence_header);
    const auto body = std::span(flv).subspan(v.file_offset, v.size);
    const auto p = read_flv_tag_head(v.type, body.first(std::min(body.size(), kFlvTagHeadBytes)), v.size);
    if (p.kind == FlvPacketKind::NoMedia) continue;
    REQUIRE(p.kind == FlvPacketKind::Frame);
    hls::Sample out;
    out.video = v.type == vod::kSampleVideo;
    out.keyframe = v.keyframe;
    out.dts = uint64_t{v.dts_ms} * 90;
    out.cts = v.cts_ms * 90;
    out.data = body.subspan(p.prefix);
    (out.video ? s.video : s.audio).push_back(out);
  }
  for (auto* track : {&s.video, &s.audio}) {
    for (size_t i = 0; i + 1 < track->size(); ++i)
      (*track)[i].duration = static_cast<uint32_t>((*track)[i + 1].dts - (*track)[i].dts);
    if (track->size() >= 2) track->back().duration = (*track)[track->size() - 2].duration;
  }
  return s;
}

// init + one fragment per part: a part ends before a keyframe or after 5 video frames and takes
// the audio samples that start before its end.
Buffer write_fmp4(const Stream& s, size_t& parts) {
  Buffer out = fmp4::init_segment(s.setup);
  REQUIRE(!out.empty());
  size_t v = 0, a = 0;
  parts = 0;
  uint32_t sequence = 1;
  while (v < s.video.size() || a < s.audio.size()) {
    size_t v_end = v;
    while (v_end < s.video.size() && (v_end == v || !s.video[v_end].keyframe) && v_end - v < 5) ++v_end;
    size_t a_end = a;
    const bool last = v_end == s.video.size();
    while (a_end < s.audio.size() && (last || s.audio[a_end].dts < s.video[v_end].dts)) ++a_end;
    const Buffer f =
        fmp4::fragment(sequence++, std::span(s.video).subspan(v, v_end - v), std::span(s.audio).subspan(a, a_end - a));
    REQUIRE(!f.empty());
    out.insert(out.end(), f.begin(), f.end());
    v = v_end;
    a = a_end;
    ++parts;
  }
  return out;
}

// `flv` written as fMP4 has the packets of `reference` (a file in `dir`): the same count, sizes,
// data and key flags, and times equal after shifting the reference's by a constant (its first
// video dts to ours), within `tolerance_ms`.
void check(const Buffer& flv, const TempDir& dir, const std::string& reference, double tolerance_ms,
           const std::string& what, const std::string& video_tag) {
  const Stream s = stream_of(flv);
  size_t parts = 0;
  const Buffer mp4 = write_fmp4(s, parts);
  const std::string flv_path = dir.file("source.flv"), mp4_path = dir.file("out.mp4");
  write_file(flv_path, flv);
  write_file(mp4_path, mp4);
  if (const char* keep = enabled(); keep && keep[0] == '/') {
    write_file(std::string(keep) + "/" + what + "-init.mp4", fmp4::init_segment(s.setup));
    write_file(std::string(keep) + "/" + what + "-out.mp4", mp4);
    write_file(std::string(keep) + "/" + what + "-source.flv", flv);
  }
  auto tags = run("ffprobe -v error -show_entries stream=codec_tag_string,time_base -of csv=p=0 '" + mp4_path + "'");
  REQUIRE(tags.has_value());
  CHECK(*tags == video_tag + ",1/90000\nmp4a,1/90000\n");

  const auto before = sluice::test::probe_packets(reference.empty() ? flv_path : dir.file(reference));
  const auto after = sluice::test::probe_packets(mp4_path);
  REQUIRE(before.size() == 2);
  REQUIRE(after.size() == 2);
  REQUIRE(!before.at("video").empty());
  REQUIRE(!after.at("video").empty());
  const double shift = after.at("video")[0].dts_ms - before.at("video")[0].dts_ms;
  for (const auto& entry : before) {
    // Not a structured binding: clang 14 cannot capture one in CAPTURE's lambda.
    const std::string& type = entry.first;
    const auto& packets = entry.second;
    CAPTURE(type);
    REQUIRE(after.count(type));
    const auto& ours = after.at(type);
    REQUIRE(ours.size() == packets.size());
    for (size_t i = 0; i < packets.size(); ++i) {
      CAPTURE(i);
      CHECK(std::abs(ours[i].pts_ms - (packets[i].pts_ms + shift)) <= tolerance_ms);
      CHECK(std::abs(ours[i].dts_ms - (packets[i].dts_ms + shift)) <= tolerance_ms);
      CHECK(ours[i].size == packets[i].size);
      CHECK(ours[i].key == packets[i].key);
      CHECK(ours[i].md5 == packets[i].md5);
    }
  }
  auto decoded = run("ffmpeg -v error -i '" + mp4_path + "' -f null - 2>&1");
  REQUIRE(decoded.has_value());
  CHECK(*decoded == "");
  MESSAGE(what << ": " << s.video.size() << " video and " << s.audio.size() << " audio samples in " << parts
               << " fragments, " << mp4.size() << " bytes; ffprobe packets identical to "
               << (reference.empty() ? "the FLV" : reference) << "'s (times shifted by " << shift << " ms)");
}

const std::string kBitexact = "-threads 1 -fflags +bitexact -flags:v +bitexact -flags:a +bitexact ";

}  // namespace

TEST_CASE("ffprobe: H.264 (B-frames) + AAC from an ffmpeg FLV") {
  if (skipped_without(enabled(), "SLUICE_FMP4_FFPROBE (tests/CMakeLists.txt sets it)")) return;
  TempDir dir("sluice-fmp4");
  ffmpeg("-f lavfi -i testsrc=size=320x240:rate=25 -f lavfi -i sine -c:v libx264 -g 25 -c:a aac -t 3 " + kBitexact +
         "'" + dir.file("x.flv") + "'");
  // FLV and fMP4 times are the same milliseconds: no shift, no rounding.
  check(read_file(dir.file("x.flv")), dir, "", 0, "h264", "avc1");
}

TEST_CASE("ffprobe: HEVC + AAC, by way of an ffmpeg HEVC MP4") {
  if (skipped_without(enabled(), "SLUICE_FMP4_FFPROBE (tests/CMakeLists.txt sets it)")) return;
  TempDir dir("sluice-fmp4");
  ffmpeg(
      "-f lavfi -i testsrc=size=320x240:rate=25 -f lavfi -i sine -c:v libx265 -x265-params "
      "log-level=error:bframes=2 -g 25 -c:a aac -t 3 " +
      kBitexact + "'" + dir.file("x.mp4") + "'");
  const Buffer source = read_file(dir.file("x.mp4"));
  auto index = vod::demux_mp4(source);
  REQUIRE(index.ok());
  REQUIRE(index->video_codec == VideoCodec::Hevc);
  // ffmpeg 5's FLV demuxer does not read Enhanced RTMP: compare with the MP4, whose edit list
  // shifts the times and whose 1/44100 audio timescale is rounded to milliseconds in the FLV.
  check(sluice::test::index_to_flv(source, *index), dir, "x.mp4", 1.0, "hevc", "hvc1");
}
