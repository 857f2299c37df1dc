// Finalized recordings read by ffprobe: the duration it reports is ours, and an ffmpeg-made FLV
// used as a torn .part comes out with the same packets and the keyframe index ffmpeg itself would
// write. Skipped (with a message) when ffmpeg or ffprobe is not installed.
#include <doctest/doctest.h>
#include <stdlib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <string>

#include "media/record/finalize_plan.hpp"
#include "unit/media/record/part_builder.hpp"
#include "unit/media/tool_files.hpp"

using namespace sluice;
using namespace sluice::media;
using namespace sluice::media::record;
using namespace sluice::media::record::test;
using sluice::test::read_file;
using sluice::test::run;
using sluice::test::skipped_without;
using sluice::test::TempDir;
using sluice::test::write_file;
namespace amf = sluice::protocol::amf;

namespace {

bool have_tool(const char* name) { return run(std::string(name) + " -version >/dev/null 2>&1").has_value(); }

FinalizePlan plan_for(std::span<const uint8_t> part) {
  auto plan = plan_finalize(scan_recording(part));
  INFO((plan ? std::string() : plan.error().message()));
  REQUIRE(plan.ok());
  return std::move(*plan);
}

// `ffprobe -v error -show_entries format=duration -of csv=p=0 FILE`, with what it printed on
// stderr (errors) kept apart.
double probe_duration(const std::string& path, std::string* errors = nullptr) {
  auto out = run("ffprobe -v error -show_entries format=duration -of csv=p=0 '" + path + "' 2>" + path + ".err");
  REQUIRE(out.has_value());
  if (errors) {
    const Bytes e = read_file(path + ".err");
    errors->assign(e.begin(), e.end());
  }
  return std::stod(*out);
}

// codec_type|pts_time|size|pos|flags|data_hash per packet (ffprobe's order).
std::vector<std::vector<std::string>> probe_packets(const std::string& path) {
  auto out =
      run("ffprobe -v error -show_data_hash md5 -of compact=p=0:nk=1 -show_entries "
          "packet=codec_type,pts_time,size,flags,data_hash,pos '" +
          path + "'");
  REQUIRE(out.has_value());
  std::vector<std::vector<std::string>> packets;
  std::istringstream lines(*out);
  for (std::string line; std::getline(lines, line);) {
    auto& fields = packets.emplace_back();
    std::istringstream parts(line);
    for (std::string f; std::getline(parts, f, '|');) fields.push_back(f);
  }
  return packets;
}

std::vector<double> numbers(const amf::Value& metadata, const char* name) {
  const amf::Value* keyframes = metadata.find("keyframes");
  REQUIRE(keyframes);
  const amf::Value* array = keyframes->find(name);
  REQUIRE(array);
  std::vector<double> out;
  for (const auto& v : array->items()) out.push_back(v.as_number());
  return out;
}

}  // namespace

TEST_CASE("ffprobe reads the duration of a finalized synthetic recording") {
  if (skipped_without(have_tool("ffprobe"), "ffprobe")) return;
  TempDir dir("sluice-record");
  const Bytes part = part_bytes(recording_tags(250));
  const FinalizePlan plan = plan_for(part);
  const std::string path = dir.file("synthetic.flv");
  write_file(path, apply_finalize_plan(plan, part));
  CHECK(probe_duration(path) == doctest::Approx(plan.duration_ms / 1000.0).epsilon(1e-6));
}

TEST_CASE("an ffmpeg FLV torn like a crashed .part: same packets, ffmpeg's own keyframe index") {
  if (skipped_without(have_tool("ffmpeg") && have_tool("ffprobe"), "ffmpeg/ffprobe")) return;
  TempDir dir("sluice-record");
  const std::string source = dir.file("source.flv");
  const std::string cmd =
      "ffmpeg -v error -y -f lavfi -i testsrc=size=64x48:rate=10 -f lavfi -i sine=sample_rate=8000 "
      "-t 6 -c:v libx264 -g 10 -threads 1 -c:a aac -fflags +bitexact -flags:v +bitexact "
      "-flvflags add_keyframe_index '" +
      source + "' 2>&1";
  INFO(cmd);
  REQUIRE(run(cmd).has_value());
  const Bytes whole = read_file(source);
  auto ffmpeg_metadata = first_metadata(whole);
  REQUIRE(ffmpeg_metadata);
  const auto tags = read_tags(whole);
  REQUIRE(tags.size() > 10);

  // Torn in the middle of the tag before last: that tag and the last one are lost.
  const uint64_t cut = tags[tags.size() - 2].offset + 20;
  const auto part = std::span(whole).first(cut);
  const FinalizePlan plan = plan_for(part);
  const Bytes final_file = apply_finalize_plan(plan, part);
  const std::string path = dir.file("final.flv");
  write_file(path, final_file);

  std::string errors;
  CHECK(probe_duration(path, &errors) == doctest::Approx(plan.duration_ms / 1000.0).epsilon(1e-6));
  CHECK(errors.empty());

  // The same packets, shifted by the difference of the two heads.
  const int64_t ffmpeg_head = int64_t(tags[1].offset);
  const int64_t our_head = int64_t(plan.head.size());
  const auto before = probe_packets(source);
  const auto after = probe_packets(path);
  REQUIRE(after.size() + 2 >= before.size());
  REQUIRE(after.size() < before.size());
  for (size_t i = 0; i < after.size(); ++i) {
    CAPTURE(i);
    REQUIRE(after[i].size() == 6);
    REQUIRE(before[i].size() == 6);
    for (size_t f : {0, 1, 2, 4, 5}) CHECK(after[i][f] == before[i][f]);  // type, pts, size, flags, hash
    CHECK(std::stoll(after[i][3]) - our_head == std::stoll(before[i][3]) - ffmpeg_head);
  }

  // ffmpeg's index, less what was torn off, shifted the same way.
  auto ours = first_metadata(final_file);
  REQUIRE(ours);
  const auto their_positions = numbers(*ffmpeg_metadata, "filepositions");
  const auto their_times = numbers(*ffmpeg_metadata, "times");
  const auto our_positions = numbers(*ours, "filepositions");
  const auto our_times = numbers(*ours, "times");
  REQUIRE(our_positions.size() >= 5);
  REQUIRE(our_positions.size() <= their_positions.size());
  for (size_t i = 0; i < our_positions.size(); ++i) {
    CHECK(our_positions[i] - double(our_head) == their_positions[i] - double(ffmpeg_head));
    CHECK(our_times[i] == their_times[i]);
  }
  // ffmpeg's own properties survive; ours replace its totals.
  CHECK(ours->get_string("encoder") == ffmpeg_metadata->get_string("encoder"));
  CHECK(ours->get_number("width") == 64);
  CHECK(ours->get_number("filesize") == double(final_file.size()));
}
