// VOD indexers against files made by ffmpeg at test time, checked packet by packet against
// ffprobe: count, offsets, sizes, timestamps, keyframes and an MD5 of every sample's bytes.
// Skipped (with a message) when ffmpeg or ffprobe is not installed.
#include <doctest/doctest.h>
#include <openssl/evp.h>
#include <stdlib.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "media/codec/flv_audio.hpp"
#include "media/codec/flv_video.hpp"
#include "media/flv/flv.hpp"
#include "media/script_data.hpp"
#include "media/vod/flv_indexer.hpp"
#include "media/vod/mp4_demuxer.hpp"
#include "media/vod/tag_body.hpp"
#include "unit/media/index_flv.hpp"
#include "unit/media/tool_files.hpp"

using namespace sluice;
using namespace sluice::media;
using namespace sluice::media::vod;
using Bytes = std::vector<uint8_t>;
using sluice::test::have_ffmpeg_tools;
using sluice::test::index_to_flv;
using sluice::test::read_file;
using sluice::test::run;
using sluice::test::skipped_without;
using sluice::test::TempDir;
using sluice::test::write_file;

namespace {

std::string md5_hex(std::span<const uint8_t> data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(data.data(), data.size(), digest, &len, EVP_md5(), nullptr);
  std::string hex;
  char b[3];
  for (unsigned i = 0; i < len; ++i) {
    std::snprintf(b, sizeof b, "%02x", digest[i]);
    hex += b;
  }
  return hex;
}

struct Packet {
  std::string type;
  double pts_ms = 0;
  double dts_ms = 0;
  uint32_t size = 0;
  uint64_t pos = 0;
  bool key = false;
  std::string md5;
};

// Parses `ffprobe -of compact=p=0` key=value records. Side data may break a record over several
// lines, so records are split at "codec_type=" rather than at newlines.
std::vector<Packet> probe(const std::string& path) {
  auto out =
      run("ffprobe -v error -show_data_hash md5 -of compact=p=0 -show_entries "
          "packet=codec_type,pts_time,dts_time,size,pos,flags,data_hash '" +
          path + "'");
  REQUIRE(out.has_value());
  std::vector<Packet> packets;
  std::string token;
  std::istringstream in(*out);
  auto field = [&](const std::string& kv) {
    const auto eq = kv.find('=');
    if (eq == std::string::npos) return;
    const std::string k = kv.substr(0, eq), v = kv.substr(eq + 1);
    if (k == "codec_type") packets.emplace_back().type = v;
    if (packets.empty()) return;
    Packet& p = packets.back();
    if (k == "pts_time" && v != "N/A") p.pts_ms = std::stod(v) * 1000;
    if (k == "dts_time" && v != "N/A") p.dts_ms = std::stod(v) * 1000;
    if (k == "size") p.size = static_cast<uint32_t>(std::stoul(v));
    if (k == "pos") p.pos = std::stoull(v);
    if (k == "flags") p.key = !v.empty() && v[0] == 'K';
    if (k == "data_hash") p.md5 = v.substr(v.find(':') + 1);
  };
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream parts(line);
    while (std::getline(parts, token, '|')) field(token);
  }
  return packets;
}

void ffmpeg(const std::string& args) {
  const std::string cmd = "ffmpeg -v error -y " + args + " 2>&1";
  auto out = run(cmd);
  INFO(cmd);
  REQUIRE(out.has_value());
}

const std::string kTestSource = "-f lavfi -i testsrc=duration=3:size=320x240:rate=25 -f lavfi -i sine=duration=3 ";

// Reads every sample through plan_read, as the server will, and checks it against its packet.
void check_mp4(const Bytes& file, const MediaIndex& index, const std::vector<Packet>& packets) {
  std::map<uint64_t, const Packet*> by_pos;
  for (const auto& p : packets) by_pos[p.pos] = &p;
  REQUIRE(index.samples.size() == packets.size());
  const Sample& first = index.samples.front();
  REQUIRE(by_pos.count(first.file_offset));
  // Our times start at 0; ffprobe's may be negative (edit lists): one constant offset between.
  const double offset = first.dts_ms - by_pos[first.file_offset]->dts_ms;
  size_t keyframes = 0, hashed = 0;
  for (uint32_t next = 0; next < index.samples.size();) {
    const ReadPlan plan = index.plan_read(next, static_cast<uint32_t>(index.samples.size()), 64 * 1024);
    REQUIRE(plan.end > next);
    REQUIRE(plan.bytes.end() <= file.size());
    const auto buffer = std::span(file).subspan(plan.bytes.offset, plan.bytes.size);
    for (uint32_t i = plan.first; i < plan.end; ++i) {
      const Sample& s = index.samples[i];
      INFO("sample " << i << " at " << s.file_offset);
      REQUIRE(by_pos.count(s.file_offset));
      const Packet& p = *by_pos[s.file_offset];
      CHECK(p.type == (s.type == kSampleVideo ? "video" : "audio"));
      CHECK(s.size == p.size);
      CHECK(std::abs(s.dts_ms - (p.dts_ms + offset)) <= 1.0);
      if (s.type == kSampleVideo) {
        CHECK(s.keyframe == p.key);
        CHECK(std::abs(s.dts_ms + s.cts_ms - (p.pts_ms + offset)) <= 1.0);
        keyframes += s.keyframe;
      }
      auto bytes = plan.sample_bytes(buffer, s);
      REQUIRE(bytes.ok());
      CHECK(md5_hex(*bytes) == p.md5);
      ++hashed;
    }
    next = plan.end;
  }
  CHECK(hashed == packets.size());
  CHECK(keyframes == index.keyframes.size());
}

// Every tag body must parse with the live path's parsers and say what the sample says.
void check_tag_bodies(const Bytes& file, const MediaIndex& index) {
  for (const Sample& s : index.samples) {
    Bytes body;
    REQUIRE(sample_to_tag_body(index, s, std::span(file).subspan(s.file_offset, s.size), body).ok());
    if (s.type == kSampleVideo) {
      auto h = parse_video_tag(body);
      REQUIRE(h.ok());
      CHECK(h->is_keyframe() == s.keyframe);
      CHECK(h->codec() == index.video_codec);
      REQUIRE(h->tracks.first() != nullptr);
      CHECK(h->tracks.first()->composition_time == s.cts_ms);
      CHECK(h->tracks.first()->data_size == s.size);
    } else {
      auto h = parse_audio_tag(body);
      REQUIRE(h.ok());
      CHECK(h->codec() == index.audio_codec);
      CHECK_FALSE(h->is_sequence_header());
    }
  }
}

MediaIndex demux_file_in_pieces(const Bytes& file) {
  // As the server does it: box headers one by one, then the moov, never the mdat.
  Mp4Demuxer demuxer(file.size());
  uint64_t bytes_read = 0;
  while (!demuxer.done()) {
    const ByteRange need = demuxer.next_request();
    REQUIRE(need.end() <= file.size());
    bytes_read += need.size;
    auto fed = demuxer.feed(need.offset, std::span(file).subspan(need.offset, need.size));
    INFO((fed.ok() ? "" : fed.error().message()));
    REQUIRE(fed.ok());
  }
  CHECK(bytes_read < file.size() / 2);  // the samples were not read
  auto index = demuxer.finish();
  REQUIRE(index.ok());
  return std::move(*index);
}

void check_ffmpeg_mp4(const std::string& encode_args, const std::string& name, bool round_trip) {
  TempDir dir("sluice-vod");
  const std::string path = dir.file(name);
  ffmpeg(kTestSource + encode_args + " '" + path + "'");
  const Bytes file = read_file(path);
  const MediaIndex index = demux_file_in_pieces(file);
  CHECK(index.has_video);
  CHECK(index.has_audio);
  CHECK(index.width == 320);
  CHECK(index.height == 240);
  CHECK(index.audio_sample_rate == 44100);
  CHECK(index.duration_ms >= 2900);
  CHECK(index.duration_ms <= 3200);
  CHECK(index.keyframes.size() == 3);  // -g 25 over 3 s at 25 fps
  check_mp4(file, index, probe(path));
  check_tag_bodies(file, index);
  if (!round_trip) return;
  // ffmpeg decodes what a player would receive, and finds the same packets.
  const std::string flv = dir.file("roundtrip.flv");
  write_file(flv, index_to_flv(file, index));
  CHECK(probe(flv).size() == index.samples.size());
  auto decoded = run("ffmpeg -v error -i '" + flv + "' -f null - 2>&1");
  REQUIRE(decoded.has_value());
  CHECK(*decoded == "");
}

}  // namespace

TEST_CASE("ffmpeg MP4 with moov at the end matches ffprobe") {
  if (skipped_without(have_ffmpeg_tools(), "ffmpeg/ffprobe")) return;
  check_ffmpeg_mp4("-c:v libx264 -g 25 -c:a aac", "x.mp4", true);
}

TEST_CASE("ffmpeg faststart MP4 matches ffprobe") {
  if (skipped_without(have_ffmpeg_tools(), "ffmpeg/ffprobe")) return;
  check_ffmpeg_mp4("-c:v libx264 -g 25 -c:a aac -movflags +faststart", "fast.mp4", true);
}

TEST_CASE("ffmpeg QuickTime MOV (esds inside the sound description's wave atom) matches ffprobe") {
  if (skipped_without(have_ffmpeg_tools(), "ffmpeg/ffprobe")) return;
  check_ffmpeg_mp4("-c:v libx264 -g 25 -c:a aac", "x.mov", true);
}

TEST_CASE("ffmpeg HEVC + MP3 MP4 matches ffprobe") {
  if (skipped_without(have_ffmpeg_tools() && run("ffmpeg -hide_banner -encoders 2>/dev/null | grep -q libx265 && "
                                                 "ffmpeg -hide_banner -encoders 2>/dev/null | grep -q libmp3lame"),
                      "ffmpeg with libx265 and libmp3lame")) {
    return;
  }
  // ffmpeg 5 cannot read Enhanced RTMP FLV, so no round trip here.
  check_ffmpeg_mp4("-c:v libx265 -x265-params log-level=error -g 25 -c:a libmp3lame", "hevc.mp4", false);
}

TEST_CASE("ffmpeg FLV matches ffprobe, whole or read in small pieces") {
  if (skipped_without(have_ffmpeg_tools(), "ffmpeg/ffprobe")) return;
  TempDir dir("sluice-vod");
  const std::string path = dir.file("x.flv");
  ffmpeg(kTestSource + "-c:v libx264 -g 25 -c:a aac '" + path + "'");
  const Bytes file = read_file(path);
  auto whole = index_flv(file);
  REQUIRE(whole.ok());
  const MediaIndex& index = *whole;
  CHECK(index.width == 320);
  CHECK(index.audio_sample_rate == 44100);
  CHECK(index.keyframes.size() == 3);
  CHECK(index.video_sequence_header.size() > 5);
  CHECK(index.audio_sequence_header.size() >= 4);  // 0xAF 0x00 + AudioSpecificConfig
  CHECK(is_on_metadata(index.metadata));

  // ffprobe's pos is the tag header; its packet data skips the FLV codec header (5 or 2 bytes).
  std::map<uint64_t, const Sample*> by_body;
  for (const Sample& s : index.samples) by_body[s.file_offset] = &s;
  const auto packets = probe(path);
  size_t matched = 0;
  for (const Packet& p : packets) {
    INFO("packet at " << p.pos);
    REQUIRE(by_body.count(p.pos + kFlvTagHeaderSize));
    const Sample& s = *by_body[p.pos + kFlvTagHeaderSize];
    const uint32_t header = s.type == kSampleVideo ? 5 : 2;
    CHECK(s.size == p.size + header);
    CHECK(s.dts_ms == std::llround(p.dts_ms));
    if (s.type == kSampleVideo) {
      CHECK(s.keyframe == p.key);
      CHECK(s.dts_ms + s.cts_ms == std::llround(p.pts_ms));
    }
    CHECK(md5_hex(std::span(file).subspan(s.file_offset + header, s.size - header)) == p.md5);
    ++matched;
  }
  // The only sample ffprobe does not list is the AVC end-of-sequence tag ffmpeg writes last.
  CHECK(matched + 1 == index.samples.size());
  CHECK(index.samples.back().type == kSampleVideo);
  CHECK(file[index.samples.back().file_offset + 1] == 2);

  // The same index when the file comes in pieces no larger than asked.
  FlvIndexer pieces(file.size());
  size_t feeds = 0;
  while (!pieces.done()) {
    const ByteRange need = pieces.next_request();
    const uint64_t len = std::min<uint64_t>(std::max<uint64_t>(need.size, 4096), file.size() - need.offset);
    REQUIRE(pieces.feed(need.offset, std::span(file).subspan(need.offset, len)).ok());
    ++feeds;
  }
  auto piecewise = pieces.finish();
  REQUIRE(piecewise.ok());
  CHECK(feeds > 10);
  CHECK(piecewise->samples.size() == index.samples.size());
  CHECK(piecewise->keyframes.size() == index.keyframes.size());
  CHECK(piecewise->metadata == index.metadata);
}
