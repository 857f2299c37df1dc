// MP4 copies of real recordings, read by ffprobe: an ffmpeg-made FLV (H.264 with B-frames + AAC,
// H.264 + MP3) and its MP4 copy have the same packets in each stream (count, size, MD5 of the
// data, pts, dts, key flags), the same duration within one frame, moov before mdat, and ffmpeg
// decodes the copy without a complaint. HEVC too, from an FLV built out of an ffmpeg-made HEVC MP4
// (ffmpeg 5 cannot write HEVC into FLV). Skipped (with a message) when ffmpeg or an encoder is not
// installed.
#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "media/flv/flv.hpp"
#include "media/record/mp4_layout.hpp"
#include "media/vod/flv_indexer.hpp"
#include "media/vod/mp4_demuxer.hpp"
#include "media/vod/tag_body.hpp"
#include "unit/media/index_flv.hpp"
#include "unit/media/ffprobe_packets.hpp"
#include "unit/media/tool_files.hpp"

using namespace sluice;
using namespace sluice::media;
using namespace sluice::media::record;
using namespace sluice::media::vod;
using Bytes = std::vector<uint8_t>;
using sluice::test::ffmpeg;
using sluice::test::have_ffmpeg_tools;
using sluice::test::index_to_flv;
using sluice::test::read_file;
using sluice::test::run;
using sluice::test::skipped_without;
using sluice::test::TempDir;
using sluice::test::write_file;

namespace {

bool have_encoder(const std::string& name) {
  return run("ffmpeg -hide_banner -encoders 2>/dev/null | grep -q ' " + name + " '").has_value();
}

double probe_duration(const std::string& path) {
  auto out = run("ffprobe -v error -show_entries format=duration -of csv=p=0 '" + path + "'");
  REQUIRE(out.has_value());
  return std::stod(*out) * 1000;
}

// The top-level box types of a file, in order.
std::vector<std::string> top_level_boxes(const Bytes& file) {
  std::vector<std::string> types;
  for (uint64_t pos = 0; pos + 8 <= file.size();) {
    uint64_t size = load_u32be(file.data() + pos);
    if (size == 1 && pos + 16 <= file.size())
      size = uint64_t{load_u32be(file.data() + pos + 8)} << 32 | load_u32be(file.data() + pos + 12);
    types.emplace_back(reinterpret_cast<const char*>(file.data() + pos + 4), 4);
    if (size < 8) break;
    pos += size;
  }
  return types;
}

struct Figures {
  size_t video = 0, audio = 0;
  double first_audio_ms = 0;  // in the copy
};

// `copy`'s packets are `source`'s: same count, sizes, data and key flags in each stream, and times
// equal (within `tolerance_ms`) after shifting the source's by `offset_ms`.
Figures compare_packets(const std::string& source, const std::string& copy, double offset_ms, double tolerance_ms) {
  auto before = sluice::test::probe_packets(source);
  auto after = sluice::test::probe_packets(copy);
  Figures f;
  REQUIRE(before.size() == after.size());
  for (const auto& entry : before) {
    // Not a structured binding: clang 14 cannot capture one in CAPTURE's lambda.
    const std::string& type = entry.first;
    const auto& packets = entry.second;
    CAPTURE(type);
    REQUIRE(after.count(type));
    const auto& ours = after[type];
    REQUIRE(ours.size() == packets.size());
    (type == "video" ? f.video : f.audio) = ours.size();
    if (type == "audio" && !ours.empty()) f.first_audio_ms = ours[0].pts_ms;
    for (size_t i = 0; i < packets.size(); ++i) {
      CAPTURE(i);
      CHECK(ours[i].size == packets[i].size);
      CHECK(ours[i].md5 == packets[i].md5);
      CHECK(ours[i].key == packets[i].key);
      CHECK(std::abs(ours[i].pts_ms - (packets[i].pts_ms + offset_ms)) <= tolerance_ms);
      CHECK(std::abs(ours[i].dts_ms - (packets[i].dts_ms + offset_ms)) <= tolerance_ms);
    }
  }
  return f;
}

// Plans and writes the MP4 copy of `flv` next to it; checks what does not need ffprobe.
Mp4Layout write_copy(const Bytes& flv, const std::string& path) {
  auto index = index_flv(flv);
  REQUIRE(index.ok());
  auto layout = plan_mp4(*index, flv);
  INFO((layout ? std::string() : layout.error().message()));
  REQUIRE(layout.ok());
  CHECK(layout->notes.empty());
  const Bytes mp4 = apply_mp4_layout(*layout, flv);
  REQUIRE(mp4.size() == layout->final_size);
  CHECK(top_level_boxes(mp4) == std::vector<std::string>{"ftyp", "moov", "mdat"});
  write_file(path, mp4);
  // ffmpeg decodes it without a word.
  auto decoded = run("ffmpeg -v error -i '" + path + "' -f null - 2>&1");
  REQUIRE(decoded.has_value());
  CHECK(*decoded == "");
  return std::move(*layout);
}

const std::string kSource = "-f lavfi -i testsrc=size=160x120:rate=25 -f lavfi -i sine=sample_rate=44100 -t 6 ";
const std::string kBitexact = "-threads 1 -fflags +bitexact -flags:v +bitexact -flags:a +bitexact ";
constexpr double kFrameMs = 40;  // 25 fps

void check_ffmpeg_flv(const std::string& codecs, const char* what) {
  TempDir dir("sluice-mp4");
  const std::string flv_path = dir.file("source.flv");
  const std::string mp4_path = dir.file("copy.mp4");
  ffmpeg(kSource + codecs + kBitexact + "'" + flv_path + "'");
  const Bytes flv = read_file(flv_path);
  const Mp4Layout layout = write_copy(flv, mp4_path);
  // FLV and MP4 times are the same milliseconds: no shift, no rounding.
  const Figures f = compare_packets(flv_path, mp4_path, 0, 0);
  CHECK(f.video == layout.video_samples);
  CHECK(f.audio == layout.audio_samples);
  // ffmpeg starts the audio after the video's B-frame delay: the copy's empty edit says so.
  CHECK(f.first_audio_ms > 0);
  const double flv_ms = probe_duration(flv_path), mp4_ms = probe_duration(mp4_path);
  CHECK(std::abs(flv_ms - mp4_ms) <= kFrameMs);
  MESSAGE(std::string(what) << ": " << f.video << " video and " << f.audio << " audio packets identical; duration FLV "
                            << flv_ms << " ms, MP4 " << mp4_ms << " ms; FLV " << flv.size() << " bytes, MP4 "
                            << layout.final_size << " (head " << layout.head.size() << "); audio starts at "
                            << f.first_audio_ms << " ms");
}

}  // namespace

TEST_CASE("an ffmpeg FLV (H.264 with B-frames + AAC) and its MP4 copy have the same packets") {
  if (skipped_without(have_ffmpeg_tools(), "ffmpeg/ffprobe")) return;
  check_ffmpeg_flv("-c:v libx264 -bf 2 -g 25 -c:a aac ", "H.264 + AAC");
}

TEST_CASE("an ffmpeg FLV (H.264 + MP3) and its MP4 copy have the same packets") {
  if (skipped_without(have_ffmpeg_tools() && have_encoder("libmp3lame"), "ffmpeg with libmp3lame")) return;
  check_ffmpeg_flv("-c:v libx264 -bf 2 -g 25 -c:a libmp3lame ", "H.264 + MP3");
}

TEST_CASE("HEVC: an FLV made from an ffmpeg HEVC MP4 copies back to the same packets") {
  if (skipped_without(have_ffmpeg_tools() && have_encoder("libx265"), "ffmpeg with libx265")) return;
  TempDir dir("sluice-mp4");
  const std::string source = dir.file("source.mp4");
  const std::string copy = dir.file("copy.mp4");
  ffmpeg(kSource + "-c:v libx265 -x265-params log-level=error:bframes=2 -g 25 -c:a aac " + kBitexact + "'" + source +
         "'");
  const Bytes mp4 = read_file(source);
  auto source_index = demux_mp4(mp4);
  REQUIRE(source_index.ok());
  REQUIRE(source_index->video_codec == VideoCodec::Hevc);
  const Bytes flv = index_to_flv(mp4, *source_index);
  const Mp4Layout layout = write_copy(flv, copy);
  CHECK(layout.video_samples == 150);
  // ffmpeg's MP4 has an edit list for the B-frame delay (negative dts) and a 1/12800 video
  // timescale; the FLV has neither: one constant shift, and times within a millisecond.
  const auto before = sluice::test::probe_packets(source);
  const auto after = sluice::test::probe_packets(copy);
  REQUIRE(!before.at("video").empty());
  REQUIRE(!after.at("video").empty());
  const double offset = after.at("video")[0].dts_ms - before.at("video")[0].dts_ms;
  const Figures f = compare_packets(source, copy, offset, 1.0);
  CHECK(f.video == 150);
  const double source_ms = probe_duration(source), copy_ms = probe_duration(copy);
  CHECK(std::abs(source_ms + offset - copy_ms) <= kFrameMs);
  MESSAGE("HEVC + AAC: " << f.video << " video and " << f.audio << " audio packets identical (times shifted by "
                         << offset << " ms); duration source " << source_ms << " ms, copy " << copy_ms << " ms");
}
