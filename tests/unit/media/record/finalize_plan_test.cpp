// plan_finalize: .part recordings turned into final files in memory; the results are rescanned and
// their onMetaData and tags compared with the .part's.
#include <doctest/doctest.h>

#include <algorithm>

#include "media/flv/flv_tag_head.hpp"
#include "media/record/finalize_plan.hpp"
#include "unit/media/record/part_builder.hpp"

using namespace sluice;
using namespace sluice::media;
using namespace sluice::media::record;
using namespace sluice::media::record::test;
namespace amf = sluice::protocol::amf;

namespace {

struct Finalized {
  FinalizePlan plan;
  Bytes file;
  amf::Value metadata;
};

Finalized finalize(std::span<const uint8_t> part) {
  const RecordingSummary summary = scan_recording(part);
  auto plan = plan_finalize(summary);
  INFO((plan ? std::string() : plan.error().message()));
  REQUIRE(plan.ok());
  Finalized f{std::move(*plan), {}, {}};
  f.file = apply_finalize_plan(f.plan, part);
  REQUIRE(f.file.size() == f.plan.final_size);
  auto metadata = first_metadata(f.file);
  REQUIRE(metadata);
  f.metadata = std::move(*metadata);
  return f;
}

std::vector<double> numbers(const amf::Value* array) {
  std::vector<double> out;
  REQUIRE(array);
  REQUIRE(array->type() == amf::Type::StrictArray);
  for (const amf::Value& v : array->items()) {
    REQUIRE(v.type() == amf::Type::Number);
    out.push_back(v.as_number());
  }
  return out;
}

// The final file is a valid FLV of its own, keyframe index included.
void check_final_file(const Finalized& f) {
  const RecordingSummary s = scan_recording(f.file);
  CHECK(s.flv_header_ok);
  CHECK(s.valid_bytes == f.file.size());
  CHECK(s.stop_reason.empty());
  CHECK(s.tag_count == f.plan.tag_count);
  REQUIRE(s.metadata);
  CHECK(s.metadata->tag.offset == 13);
  CHECK(f.plan.head.size() == 13 + s.metadata->tag.size);
  CHECK(f.file[4] == ((s.has_audio ? 0x04 : 0) | (s.has_video ? 0x01 : 0)));

  const amf::Value& m = f.metadata;
  CHECK(m.type() == amf::Type::EcmaArray);
  CHECK(m.get_number("duration", -1) == doctest::Approx(f.plan.duration_ms / 1000.0));
  CHECK(m.get_number("filesize") == double(f.file.size()));
  CHECK(m.get_number("lasttimestamp", -1) == doctest::Approx(s.last_timestamp_ms / 1000.0));
  REQUIRE(m.find("hasVideo"));
  CHECK(m.find("hasVideo")->as_boolean() == s.has_video);
  CHECK(m.find("hasAudio")->as_boolean() == s.has_audio);
  const amf::Value* keyframes = m.find("keyframes");
  REQUIRE(keyframes);
  CHECK(keyframes->type() == amf::Type::Object);
  REQUIRE(keyframes->properties().size() == 2);
  CHECK(keyframes->properties()[0].first == "filepositions");  // ffmpeg's order
  const auto positions = numbers(keyframes->find("filepositions"));
  const auto times = numbers(keyframes->find("times"));
  REQUIRE(positions.size() == times.size());
  CHECK(m.find("hasKeyframes")->as_boolean() == !positions.empty());
  // Each position is a video keyframe tag of the final file, with that time; the rescan finds
  // the same ones.
  REQUIRE(positions.size() == s.keyframes.size());
  for (size_t i = 0; i < positions.size(); ++i) {
    const auto at = static_cast<uint64_t>(positions[i]);
    REQUIRE(at + 11 + 16 <= f.file.size());
    auto h = parse_tag_header(std::span(f.file).subspan(at));
    REQUIRE(h.ok());
    CHECK(h->type == 9);
    CHECK(read_flv_tag_head(9, std::span(f.file).subspan(at + 11, std::min<size_t>(16, h->data_size)), h->data_size)
              .keyframe);
    CHECK(times[i] == doctest::Approx(h->timestamp / 1000.0));
    CHECK(s.keyframes[i].tag_offset == at);
  }
  if (!positions.empty()) {
    CHECK(m.get_number("lastkeyframelocation") == positions.back());
    CHECK(m.get_number("lastkeyframetimestamp") == times.back());
  }
}

// The final file's tags after its onMetaData are the .part's valid tags minus its first
// onMetaData, in order, with the same bodies and timestamps.
void check_same_tags(std::span<const uint8_t> part, uint64_t part_valid, const Finalized& f) {
  auto expected = read_tags(std::span(part).first(part_valid));
  const auto first_metadata_tag = std::find_if(expected.begin(), expected.end(), [](const FoundTag& t) {
    return t.tag.type == 18 && read_flv_tag_head(18, t.tag.body, uint32_t(t.tag.body.size())).on_metadata;
  });
  if (first_metadata_tag != expected.end()) expected.erase(first_metadata_tag);
  const auto got = read_tags(f.file);
  REQUIRE(got.size() == expected.size() + 1);
  for (size_t i = 0; i < expected.size(); ++i) {
    CAPTURE(i);
    CHECK(got[i + 1].tag.type == expected[i].tag.type);
    CHECK(got[i + 1].tag.ts == expected[i].tag.ts);
    CHECK(got[i + 1].tag.body == expected[i].tag.body);
  }
}

}  // namespace

TEST_CASE("a complete recording is finalized with a full onMetaData") {
  const auto tags = recording_tags(200);
  const Bytes part = part_bytes(tags);
  const Finalized f = finalize(part);
  check_final_file(f);
  check_same_tags(part, part.size(), f);

  uint32_t last = 0;
  for (const Tag& t : tags) last = std::max(last, t.ts);
  CHECK(f.plan.duration_ms == last);
  CHECK(last > 199 * 40);  // an AAC frame after the last video frame
  CHECK(f.plan.copy.size() == 1);
  CHECK(f.plan.copy[0].offset == 13 + 11 + publisher_metadata().size() + 4);
  CHECK(f.plan.copy[0].end() == part.size());
  // The publisher's properties are kept, the placeholders replaced in place.
  const amf::Value& m = f.metadata;
  CHECK(m.properties()[0].first == "duration");
  CHECK(m.get_number("width") == 1280);
  CHECK(m.get_number("height") == 720);
  CHECK(m.get_string("encoder") == "obs-output module");
  CHECK(m.get_number("videocodecid") == 7);
  CHECK(numbers(m.find("keyframes")->find("times")) == std::vector<double>{0, 1, 2, 3, 4, 5, 6, 7});
}

TEST_CASE("a torn recording loses only its torn tag") {
  const auto tags = recording_tags(120);
  std::vector<uint64_t> offsets;
  const Bytes whole = part_bytes(tags, &offsets);
  for (uint64_t cut :
       {offsets.back() + 1, offsets.back() + 11, uint64_t(whole.size() - 1), offsets[offsets.size() - 2] + 3}) {
    CAPTURE(cut);
    const auto part = std::span(whole).first(cut);
    const RecordingSummary s = scan_recording(part);
    const Finalized f = finalize(part);
    check_final_file(f);
    check_same_tags(part, s.valid_bytes, f);
    CHECK(f.plan.tag_count == s.tag_count);
  }
}

TEST_CASE("a recording cut by a bad PreviousTagSize keeps what precedes it") {
  std::vector<uint64_t> offsets;
  Bytes part = part_bytes(recording_tags(100), &offsets);
  part[offsets[150] - 1] ^= 0xFF;
  const Finalized f = finalize(part);
  check_final_file(f);
  check_same_tags(part, offsets[149], f);
}

TEST_CASE("without onMetaData, one is built") {
  const Bytes part = part_bytes(recording_tags(80, false, false));
  const Finalized f = finalize(part);
  check_final_file(f);
  check_same_tags(part, part.size(), f);
  CHECK(f.metadata.find("width") == nullptr);
  CHECK(f.metadata.get_number("duration") > 3);
  CHECK(f.plan.tag_count == scan_recording(part).tag_count + 1);
}

TEST_CASE("an onMetaData after the first frames: positions before and after it are right") {
  auto tags = recording_tags(80, false, false);
  tags.insert(tags.begin() + 40, Tag{18, 0, publisher_metadata()});
  const Bytes part = part_bytes(tags);
  const Finalized f = finalize(part);
  REQUIRE(f.plan.copy.size() == 2);
  check_final_file(f);
  check_same_tags(part, part.size(), f);
  CHECK(f.metadata.get_number("width") == 1280);
}

TEST_CASE("a stale keyframe index from the publisher is replaced") {
  auto tags = recording_tags(60);
  tags[0].body = publisher_metadata(true);
  const Finalized f = finalize(part_bytes(tags));
  check_final_file(f);
  const auto positions = numbers(f.metadata.find("keyframes")->find("filepositions"));
  CHECK(positions.size() == 3);
  CHECK(std::count_if(f.metadata.properties().begin(), f.metadata.properties().end(),
                      [](const amf::Property& p) { return p.first == "keyframes"; }) == 1);
}

TEST_CASE("a later onMetaData stays in the stream as it was") {
  auto tags = recording_tags(50);
  tags.insert(tags.begin() + 30, Tag{18, 400, publisher_metadata(true)});
  const Bytes part = part_bytes(tags);
  const Finalized f = finalize(part);
  check_final_file(f);
  check_same_tags(part, part.size(), f);
}

TEST_CASE("Enhanced RTMP HEVC keyframes are in the index") {
  const Bytes part = part_bytes(recording_tags(100, true));
  const Finalized f = finalize(part);
  check_final_file(f);
  CHECK(numbers(f.metadata.find("keyframes")->find("filepositions")).size() == 4);
}

TEST_CASE("an audio-only recording") {
  std::vector<Tag> tags = {{18, 0, publisher_metadata()}, {8, 0, kAacSequenceHeader}};
  for (uint32_t i = 0; i < 50; ++i) tags.push_back({8, i * 23, aac_frame(30)});
  const Bytes part = part_bytes(tags);
  const Finalized f = finalize(part);
  check_final_file(f);
  CHECK(f.file[4] == 0x04);
  CHECK_FALSE(f.metadata.find("hasKeyframes")->as_boolean());
  CHECK(f.metadata.find("lastkeyframelocation") == nullptr);
  CHECK(f.plan.duration_ms == 49 * 23);
}

TEST_CASE("undecodable publisher metadata is replaced by a fresh one") {
  auto tags = recording_tags(30);
  tags[0].body = {0x02, 0x00, 0x0A, 'o',  'n',  'M',  'e',  't',  'a',  'D', 'a',
                  't',  'a',  0x08, 0x00, 0x00, 0x00, 0x01, 0x00, 0x01, 'x', 0xFE};
  const Finalized f = finalize(part_bytes(tags));
  check_final_file(f);
  CHECK(f.metadata.find("width") == nullptr);
}

TEST_CASE("nothing playable left: an error, the .part is kept aside") {
  const Bytes not_flv = {'n', 'o', 't', ' ', 'f', 'l', 'v', 0, 0, 0, 0, 0, 0, 0};
  auto r1 = plan_finalize(scan_recording(not_flv));
  REQUIRE_FALSE(r1.ok());
  CHECK(r1.error().code == Errc::Malformed);

  const Bytes only_metadata = part_bytes({{18, 0, publisher_metadata()}});
  auto r2 = plan_finalize(scan_recording(only_metadata));
  REQUIRE_FALSE(r2.ok());
  CHECK(r2.error().code == Errc::Malformed);

  const Bytes torn_first_frame = part_bytes(recording_tags(1));
  auto r3 =
      plan_finalize(scan_recording(std::span(torn_first_frame).first(13 + 11 + publisher_metadata().size() + 4 + 5)));
  CHECK_FALSE(r3.ok());
}

TEST_CASE("finalizing a finalized file changes nothing but keeps it valid") {
  const Bytes part = part_bytes(recording_tags(100));
  const Finalized once = finalize(part);
  const Finalized twice = finalize(once.file);
  CHECK(twice.file == once.file);
}
