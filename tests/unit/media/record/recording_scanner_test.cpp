// RecordingScanner: recordings built in memory, scanned whole, in chunks, torn and corrupted.
#include <doctest/doctest.h>

#include <algorithm>
#include <random>

#include "media/flv/flv_tag_head.hpp"
#include "media/record/recording_scanner.hpp"
#include "unit/media/record/part_builder.hpp"

using namespace sluice;
using namespace sluice::media;
using namespace sluice::media::record;
using namespace sluice::media::record::test;

namespace {

RecordingSummary scan_in_chunks(std::span<const uint8_t> file, size_t chunk) {
  RecordingScanner scanner;
  for (size_t at = 0; at < file.size(); at += chunk) scanner.feed(file.subspan(at, std::min(chunk, file.size() - at)));
  return scanner.finish();
}

void check_same(const RecordingSummary& a, const RecordingSummary& b) {
  CHECK(a.flv_header_ok == b.flv_header_ok);
  CHECK(a.tags_offset == b.tags_offset);
  CHECK(a.valid_bytes == b.valid_bytes);
  CHECK(a.torn_bytes == b.torn_bytes);
  CHECK(a.tag_count == b.tag_count);
  REQUIRE(a.metadata.has_value() == b.metadata.has_value());
  if (a.metadata) {
    CHECK(a.metadata->tag.offset == b.metadata->tag.offset);
    CHECK(a.metadata->tag.size == b.metadata->tag.size);
    CHECK(a.metadata->payload == b.metadata->payload);
  }
  REQUIRE(a.keyframes.size() == b.keyframes.size());
  for (size_t i = 0; i < a.keyframes.size(); ++i) {
    CHECK(a.keyframes[i].tag_offset == b.keyframes[i].tag_offset);
    CHECK(a.keyframes[i].timestamp_ms == b.keyframes[i].timestamp_ms);
  }
  CHECK(a.keyframe_stride == b.keyframe_stride);
  CHECK(a.has_audio == b.has_audio);
  CHECK(a.has_video == b.has_video);
  CHECK(a.first_timestamp_ms == b.first_timestamp_ms);
  CHECK(a.last_timestamp_ms == b.last_timestamp_ms);
  CHECK(a.stop_reason == b.stop_reason);
}

// The end of the last tag of `offsets` (tag starts; `end` is the file size) at or before `cut`.
uint64_t last_complete_end(const std::vector<uint64_t>& offsets, uint64_t end, uint64_t cut) {
  uint64_t best = offsets.front();
  for (size_t i = 0; i < offsets.size(); ++i) {
    const uint64_t tag_end = i + 1 < offsets.size() ? offsets[i + 1] : end;
    if (tag_end <= cut) best = tag_end;
  }
  return best;
}

}  // namespace

TEST_CASE("a whole recording is valid and summarized") {
  const auto tags = recording_tags(100);
  std::vector<uint64_t> offsets;
  const Bytes part = part_bytes(tags, &offsets);
  const RecordingSummary s = scan_recording(part);

  CHECK(s.flv_header_ok);
  CHECK(s.tags_offset == 13);
  CHECK(s.valid_bytes == part.size());
  CHECK(s.torn_bytes == 0);
  CHECK(s.stop_reason.empty());
  CHECK(s.tag_count == tags.size());
  REQUIRE(s.metadata);
  CHECK(s.metadata->tag.offset == 13);
  CHECK(s.metadata->tag.end() == offsets[1]);
  CHECK(s.metadata->payload == tags[0].body);
  CHECK(s.has_audio);
  CHECK(s.has_video);
  CHECK(s.first_timestamp_ms == 0);
  uint32_t last = 0;
  for (const Tag& t : tags) last = t.type == 18 ? last : std::max(last, t.ts);
  CHECK(s.last_timestamp_ms == last);

  // Frames 0, 25, 50, 75 are keyframes; the sequence header at time 0 is not.
  REQUIRE(s.keyframes.size() == 4);
  CHECK(s.keyframe_stride == 1);
  for (size_t i = 0; i < s.keyframes.size(); ++i) {
    const auto it = std::find(offsets.begin(), offsets.end(), s.keyframes[i].tag_offset);
    REQUIRE(it != offsets.end());
    const Tag& t = tags[size_t(it - offsets.begin())];
    CHECK(t.type == 9);
    CHECK(t.body[0] == 0x17);
    CHECK(t.body[1] == 0x01);
    CHECK(t.ts == i * 1000);
    CHECK(s.keyframes[i].timestamp_ms == t.ts);
  }
}

TEST_CASE("the summary does not depend on chunk sizes") {
  const Bytes part = part_bytes(recording_tags(60));
  const RecordingSummary whole = scan_recording(part);
  for (size_t chunk : {size_t{1}, size_t{7}, size_t{4096}}) {
    CAPTURE(chunk);
    check_same(scan_in_chunks(part, chunk), whole);
  }
  std::mt19937 rng(7);
  RecordingScanner scanner;
  for (size_t at = 0; at < part.size();) {
    const size_t n = std::min<size_t>(std::uniform_int_distribution<size_t>(0, 40)(rng), part.size() - at);
    scanner.feed(std::span(part).subspan(at, n));  // empty chunks included
    at += n;
  }
  check_same(scanner.finish(), whole);
}

TEST_CASE("a torn last tag is dropped, at every byte of the last two tags") {
  const auto tags = recording_tags(30);
  std::vector<uint64_t> offsets;
  const Bytes part = part_bytes(tags, &offsets);
  const uint64_t from = offsets[offsets.size() - 2];
  for (uint64_t cut = from; cut <= part.size(); ++cut) {
    CAPTURE(cut);
    const auto prefix = std::span(part).first(cut);
    const RecordingSummary s = scan_recording(prefix);
    const uint64_t expected = last_complete_end(offsets, part.size(), cut);
    CHECK(s.valid_bytes == expected);
    CHECK(s.torn_bytes == cut - expected);
    size_t complete = 0;
    for (size_t i = 0; i < offsets.size(); ++i)
      complete += (i + 1 < offsets.size() ? offsets[i + 1] : part.size()) <= cut;
    CHECK(s.tag_count == complete);
    if (cut == expected) {
      CHECK(s.stop_reason.empty());
    } else {
      CHECK(s.stop_reason == "torn tag at byte " + std::to_string(expected));
    }
    if (cut % 5 == 0) check_same(scan_in_chunks(prefix, 7), s);
  }
}

TEST_CASE("a wrong PreviousTagSize ends the valid prefix before its tag") {
  const auto tags = recording_tags(30);
  std::vector<uint64_t> offsets;
  Bytes part = part_bytes(tags, &offsets);
  const size_t victim = 20;
  const uint64_t field = offsets[victim + 1] - 4;
  part[field + 3] ^= 0x01;
  const RecordingSummary s = scan_recording(part);
  CHECK(s.flv_header_ok);
  CHECK(s.valid_bytes == offsets[victim]);
  CHECK(s.tag_count == victim);
  CHECK(s.torn_bytes == part.size() - offsets[victim]);
  CHECK(s.stop_reason == "PreviousTagSize mismatch at byte " + std::to_string(field));
  check_same(scan_in_chunks(part, 1), s);
}

TEST_CASE("zeros after a crash are not tags") {
  Bytes part = part_bytes(recording_tags(30));
  const size_t size = part.size();
  part.resize(size + 4096, 0);
  const RecordingSummary s = scan_recording(part);
  CHECK(s.valid_bytes == size);
  CHECK(s.torn_bytes == 4096);
  CHECK(s.stop_reason.find("at byte " + std::to_string(size)) != std::string::npos);
}

TEST_CASE("a tag type the recorder never writes ends the valid prefix") {
  std::vector<uint64_t> offsets;
  auto tags = recording_tags(10);
  tags.insert(tags.begin() + 5, Tag{15, 40, {0x00, 0x01}});  // AMF3 script
  const Bytes part = part_bytes(tags, &offsets);
  const RecordingSummary s = scan_recording(part);
  CHECK(s.valid_bytes == offsets[5]);
  CHECK(s.stop_reason == "unexpected tag type 15 at byte " + std::to_string(offsets[5]));
}

TEST_CASE("what is not an FLV file") {
  const Bytes garbage = {'G', 'I', 'F', '8', '9', 'a', 0, 0, 0, 0, 0, 0, 0, 0};
  for (const Bytes& input : {garbage, Bytes{}, Bytes{'X'}}) {
    const RecordingSummary s = scan_recording(input);
    CHECK_FALSE(s.flv_header_ok);
    CHECK(s.valid_bytes == 0);
    CHECK(s.torn_bytes == input.size());
    CHECK(s.stop_reason == "not an FLV file");
  }
  Bytes header;
  write_flv_header(true, true, header);
  for (size_t cut = 1; cut < header.size(); ++cut) {
    const RecordingSummary s = scan_recording(std::span(header).first(cut));
    CHECK_FALSE(s.flv_header_ok);
    CHECK(s.valid_bytes == 0);
    CHECK(s.stop_reason == "torn FLV header");
  }
  const RecordingSummary just_header = scan_recording(header);
  CHECK(just_header.flv_header_ok);
  CHECK(just_header.valid_bytes == 13);
  CHECK(just_header.tag_count == 0);
  CHECK(just_header.stop_reason.empty());
}

TEST_CASE("a DataOffset beyond 9 is skipped") {
  Bytes part = part_bytes(recording_tags(10));
  part[8] = 12;  // DataOffset 12: three extra bytes before PreviousTagSize0
  part.insert(part.begin() + 9, {0xEE, 0xEE, 0xEE});
  const RecordingSummary s = scan_recording(part);
  CHECK(s.tags_offset == 16);
  CHECK(s.valid_bytes == part.size());
  check_same(scan_in_chunks(part, 1), s);
}

TEST_CASE("Enhanced RTMP HEVC keyframes are indexed, the sequence start is not") {
  const auto tags = recording_tags(60, true);
  std::vector<uint64_t> offsets;
  const Bytes part = part_bytes(tags, &offsets);
  const RecordingSummary s = scan_recording(part);
  CHECK(s.valid_bytes == part.size());
  REQUIRE(s.keyframes.size() == 3);
  for (const KeyframeRef& k : s.keyframes) {
    const auto i = size_t(std::find(offsets.begin(), offsets.end(), k.tag_offset) - offsets.begin());
    REQUIRE(i < tags.size());
    CHECK(tags[i].body[0] == 0x91);
    CHECK(read_flv_tag_head(9, tags[i].body, uint32_t(tags[i].body.size())).video_codec == VideoCodec::Hevc);
  }
  CHECK(s.keyframes[1].timestamp_ms == 1000);
}

TEST_CASE("only the first onMetaData is the metadata; a later one is an ordinary tag") {
  auto tags = recording_tags(10);
  tags.insert(tags.begin() + 6, Tag{18, 80, publisher_metadata(true)});
  const RecordingSummary s = scan_recording(part_bytes(tags));
  REQUIRE(s.metadata);
  CHECK(s.metadata->tag.offset == 13);
  CHECK(s.metadata->payload == tags[0].body);
  CHECK(s.tag_count == tags.size());
}

TEST_CASE("onMetaData above the size limit is located but not kept") {
  auto tags = recording_tags(5);
  tags[0].body.resize(vod::kMaxFlvMetadataBytes + 1, 0x05);  // onMetaData, then nulls
  const Bytes part = part_bytes(tags);
  const RecordingSummary s = scan_in_chunks(part, 65536);
  REQUIRE(s.metadata);
  CHECK(s.metadata->tag.size == 11 + vod::kMaxFlvMetadataBytes + 1 + 4);
  CHECK(s.metadata->payload.empty());
  CHECK(s.valid_bytes == part.size());
}

TEST_CASE("a keyframe that goes back in time is not a seek point") {
  auto tags = recording_tags(0);
  tags.push_back({9, 1000, avc_frame(true, 10)});
  tags.push_back({9, 500, avc_frame(true, 10)});
  tags.push_back({9, 2000, avc_frame(true, 10)});
  const RecordingSummary s = scan_recording(part_bytes(tags));
  REQUIRE(s.keyframes.size() == 2);
  CHECK(s.keyframes[0].timestamp_ms == 1000);
  CHECK(s.keyframes[1].timestamp_ms == 2000);
  CHECK(s.last_timestamp_ms == 2000);
}

TEST_CASE("past kMaxRecordedKeyframes the index is thinned evenly") {
  const uint32_t count = kMaxRecordedKeyframes + kMaxRecordedKeyframes / 2;
  Bytes part;
  write_flv_header(false, true, part);
  const Bytes key = avc_frame(true, 0);
  for (uint32_t i = 0; i < count; ++i) append_tag(9, i, key, part);
  const RecordingSummary s = scan_recording(part);
  CHECK(s.tag_count == count);
  CHECK(s.keyframe_stride == 2);
  REQUIRE(s.keyframes.size() == (count + 1) / 2);
  const uint64_t tag_size = 11 + key.size() + 4;
  for (size_t i = 0; i < s.keyframes.size(); i += 997) {
    CHECK(s.keyframes[i].timestamp_ms == 2 * i);
    CHECK(s.keyframes[i].tag_offset == 13 + 2 * i * tag_size);
  }
}
