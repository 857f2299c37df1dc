// FLV indexer: FLV files built in memory, whole, truncated and fed in pieces.
#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "media/flv/flv.hpp"
#include "media/flv/flv_tag_head.hpp"
#include "media/script_data.hpp"
#include "media/vod/flv_indexer.hpp"
#include "media/vod/tag_body.hpp"
#include "protocol/amf0.hpp"

using namespace sluice;
using namespace sluice::media;
using namespace sluice::media::vod;
using sluice::Errc;
using Bytes = std::vector<uint8_t>;

namespace {

Bytes on_metadata(double duration) {
  namespace amf = sluice::protocol::amf;
  Bytes out;
  amf::encode_amf0(amf::Value::string("onMetaData"), out);
  amf::encode_amf0(amf::Value::ecma_array({{"duration", amf::Value::number(duration)}}), out);
  return out;
}

const Bytes kAvcSequenceHeader = {0x17, 0x00, 0, 0, 0, 1, 0x64, 0, 0x1F, 0xFF, 0xE0, 0x00};
const Bytes kAacSequenceHeader = {0xAF, 0x00, 0x12, 0x10};

Bytes avc_frame(bool key, int32_t cts, size_t payload = 50) {
  Bytes b{uint8_t(key ? 0x17 : 0x27), 0x01, uint8_t(uint32_t(cts) >> 16), uint8_t(uint32_t(cts) >> 8), uint8_t(cts)};
  b.resize(b.size() + payload, 0xAB);
  return b;
}
Bytes aac_frame(size_t payload = 20) {
  Bytes b{0xAF, 0x01};
  b.resize(b.size() + payload, 0xCD);
  return b;
}

struct Tag {
  uint8_t type;
  uint32_t ts;
  Bytes body;
};

Bytes flv(const std::vector<Tag>& tags) {
  Bytes out;
  write_flv_header(true, true, out);
  for (const auto& t : tags) append_tag(t.type, t.ts, t.body, out);
  return out;
}

// A typical file: metadata, sequence headers, 2 s of 25 fps video (keyframe each second), AAC.
std::vector<Tag> typical_tags() {
  std::vector<Tag> tags = {{18, 0, on_metadata(2.0)}, {9, 0, kAvcSequenceHeader}, {8, 0, kAacSequenceHeader}};
  for (uint32_t i = 0; i < 50; ++i) {
    tags.push_back({9, i * 40, avc_frame(i % 25 == 0, i % 25 == 0 ? 0 : 80, 50 + i)});
    tags.push_back({8, i * 40 + 3, aac_frame(20 + i % 7)});
  }
  return tags;
}

MediaIndex index_ok(const Bytes& file) {
  auto r = index_flv(file);
  INFO((r.ok() ? std::string() : r.error().message()));
  REQUIRE(r.ok());
  return std::move(*r);
}

// Feeds the indexer only what it asks for plus a random amount more, in pieces.
MediaIndex index_in_pieces(const Bytes& file, std::mt19937& rng) {
  FlvIndexer indexer(file.size());
  while (!indexer.done()) {
    const ByteRange need = indexer.next_request();
    const uint64_t extra = std::uniform_int_distribution<uint64_t>(0, 300)(rng);
    const uint64_t start = need.offset - std::min<uint64_t>(need.offset, extra % 7);  // sometimes earlier
    const uint64_t end = std::min<uint64_t>(file.size(), need.end() + extra);
    REQUIRE(start <= file.size());
    REQUIRE(indexer.feed(start, std::span(file).subspan(start, end - start)).ok());
  }
  auto r = indexer.finish();
  REQUIRE(r.ok());
  return std::move(*r);
}

void check_same(const MediaIndex& a, const MediaIndex& b) {
  REQUIRE(a.samples.size() == b.samples.size());
  for (size_t i = 0; i < a.samples.size(); ++i) {
    CHECK(a.samples[i].file_offset == b.samples[i].file_offset);
    CHECK(a.samples[i].size == b.samples[i].size);
    CHECK(a.samples[i].dts_ms == b.samples[i].dts_ms);
    CHECK(a.samples[i].keyframe == b.samples[i].keyframe);
  }
  CHECK(a.keyframes.size() == b.keyframes.size());
  CHECK(a.metadata == b.metadata);
  CHECK(a.video_sequence_header == b.video_sequence_header);
  CHECK(a.audio_sequence_header == b.audio_sequence_header);
  CHECK(a.duration_ms == b.duration_ms);
}

}  // namespace

TEST_CASE("a typical FLV file") {
  const auto tags = typical_tags();
  const Bytes file = flv(tags);
  const MediaIndex index = index_ok(file);

  CHECK(index.container == Container::Flv);
  CHECK(index.has_video);
  CHECK(index.has_audio);
  CHECK(index.video_codec == VideoCodec::Avc);
  CHECK(index.audio_codec == AudioCodec::Aac);
  CHECK(index.audio_sample_rate == 44100);
  CHECK(index.audio_channels == 2);
  // Metadata and the first sequence headers are index fields, not samples.
  CHECK(index.metadata == tags[0].body);
  CHECK(index.video_sequence_header == kAvcSequenceHeader);
  CHECK(index.audio_sequence_header == kAacSequenceHeader);
  REQUIRE(index.samples.size() == 100);
  CHECK(index.sequence_header_samples.empty());
  CHECK(index.duration_ms == 49 * 40 + 3);

  // Sample bodies are the file's tag bodies as they are: no prefix.
  for (size_t i = 0; i < index.samples.size(); ++i) {
    const Sample& s = index.samples[i];
    const Tag& t = tags[3 + i];
    CHECK(s.type == t.type);
    CHECK(s.dts_ms == t.ts);
    REQUIRE(s.size == t.body.size());
    CHECK(std::equal(t.body.begin(), t.body.end(), file.begin() + long(s.file_offset)));
    auto prefix = tag_prefix(index, s);
    REQUIRE(prefix.ok());
    CHECK(prefix->size == 0);
  }
  CHECK(index.samples[0].keyframe);
  CHECK(index.samples[0].cts_ms == 0);
  CHECK_FALSE(index.samples[2].keyframe);
  CHECK(index.samples[2].cts_ms == 80);
  CHECK_FALSE(index.samples[1].keyframe);  // audio

  REQUIRE(index.keyframes.size() == 2);
  CHECK(index.keyframes[0].sample == 0);
  CHECK(index.keyframes[1].sample == 50);
  CHECK(index.keyframes[1].time_ms == 1000);
  CHECK(index.seek(0) == 0);
  CHECK(index.seek(999) == 0);
  CHECK(index.seek(1000) == 50);
  CHECK(index.seek(60000) == 50);
}

TEST_CASE("a truncated last tag ends the index before it") {
  const Bytes file = flv(typical_tags());
  const MediaIndex full = index_ok(file);
  const Sample& last = full.samples.back();
  const uint64_t last_tag = last.file_offset - kFlvTagHeaderSize;

  SUBCASE("cut inside the body") {
    const Bytes cut(file.begin(), file.begin() + long(last.file_offset + last.size - 1));
    CHECK(index_ok(cut).samples.size() == full.samples.size() - 1);
  }
  SUBCASE("cut inside the tag header") {
    const Bytes cut(file.begin(), file.begin() + long(last_tag + 5));
    CHECK(index_ok(cut).samples.size() == full.samples.size() - 1);
  }
  SUBCASE("cut inside the PreviousTagSize: the tag is whole") {
    const Bytes cut(file.begin(), file.begin() + long(last.file_offset + last.size + 2));
    CHECK(index_ok(cut).samples.size() == full.samples.size());
  }
  SUBCASE("cut inside a sequence header that is kept whole") {
    const Bytes cut(file.begin(), file.begin() + 13 + 11 + long(typical_tags()[0].body.size()) + 4 + 11 + 3);
    const auto r = index_flv(cut);
    REQUIRE_FALSE(r.ok());  // nothing but metadata is left
    CHECK(r.error().code == Errc::Malformed);
  }
}

TEST_CASE("fed in random pieces, the index is the same") {
  const Bytes file = flv(typical_tags());
  const MediaIndex whole = index_ok(file);
  std::mt19937 rng(1234);
  for (int round = 0; round < 20; ++round) check_same(whole, index_in_pieces(file, rng));
}

TEST_CASE("frame bodies are skipped, not read") {
  std::vector<Tag> tags = {{9, 0, kAvcSequenceHeader}};
  for (uint32_t i = 0; i < 10; ++i) tags.push_back({9, i * 40, avc_frame(i == 0, 0, 100000)});
  const Bytes file = flv(tags);
  FlvIndexer indexer(file.size());
  uint64_t asked = 0;
  while (!indexer.done()) {
    const ByteRange need = indexer.next_request();
    asked += need.size;
    REQUIRE(indexer.feed(need.offset, std::span(file).subspan(need.offset, need.size)).ok());
  }
  CHECK(asked < 1000);
  auto r = indexer.finish();
  REQUIRE(r.ok());
  CHECK(r->samples.size() == 10);
  CHECK(r->keyframes.size() == 1);
}

TEST_CASE("without onMetaData one is built") {
  auto tags = typical_tags();
  tags.erase(tags.begin());
  const MediaIndex index = index_ok(flv(tags));
  auto values = sluice::protocol::amf::decode_amf0_all(index.metadata);
  REQUIRE(values.ok());
  REQUIRE(values->size() == 2);
  CHECK((*values)[0].as_string() == "onMetaData");
  CHECK((*values)[1].get_number("duration") == doctest::Approx(1.963));
  CHECK((*values)[1].get_number("videocodecid") == 7);
  CHECK((*values)[1].get_number("audiocodecid") == 10);
}

TEST_CASE("a sequence header change mid-stream stays a sample") {
  auto tags = typical_tags();
  const Bytes new_header = {0x17, 0x00, 0, 0, 0, 1, 0x4D, 0, 0x28, 0xFF, 0xE0, 0x00};
  // Before the keyframe at 1000 ms: tags[3 + 50] is that keyframe.
  tags.insert(tags.begin() + 3 + 50, Tag{9, 1000, new_header});
  const MediaIndex index = index_ok(flv(tags));
  REQUIRE(index.samples.size() == 101);
  REQUIRE(index.sequence_header_samples.size() == 1);
  const uint32_t at = index.sequence_header_samples[0];
  CHECK(at == 50);
  CHECK(index.samples[at].sequence_header);
  CHECK_FALSE(index.samples[at].keyframe);
  CHECK(index.video_sequence_header == kAvcSequenceHeader);  // the initial one
  const uint32_t start = index.seek(1500);
  CHECK(start == 51);
  CHECK(index.last_sequence_header(start, kSampleVideo) == at);
  CHECK_FALSE(index.last_sequence_header(start, kSampleAudio).has_value());
  CHECK_FALSE(index.last_sequence_header(at, kSampleVideo).has_value());
}

TEST_CASE("Enhanced RTMP HEVC tags") {
  const Bytes seq = {0x90, 'h', 'v', 'c', '1', 1, 2, 3};
  const Bytes key = {0x91, 'h', 'v', 'c', '1', 0, 0, 40, 0, 0, 0, 1, 0x26};
  const Bytes inter_x = {0xA3, 'h', 'v', 'c', '1', 0, 0, 0, 1, 0x02};
  const MediaIndex index =
      index_ok(flv({{9, 0, seq}, {9, 0, key}, {9, 40, inter_x}, {9, 80, Bytes{0x93, 'h', 'v', 'c', '1', 0}}}));
  CHECK(index.video_codec == VideoCodec::Hevc);
  CHECK(index.video_sequence_header == seq);
  REQUIRE(index.samples.size() == 3);
  CHECK(index.samples[0].keyframe);
  CHECK(index.samples[0].cts_ms == 40);
  CHECK_FALSE(index.samples[1].keyframe);
  CHECK(index.samples[2].keyframe);  // CodedFramesX
  CHECK(index.keyframes.size() == 2);
  CHECK_FALSE(index.has_audio);
}

TEST_CASE("header details: DataOffset, extended timestamps, unknown tags, big script tags") {
  Bytes file = {'F', 'L', 'V', 1, 5, 0, 0, 0, 15, 0xEE, 0xEE, 0xEE, 0xEE, 0xEE, 0xEE, 0, 0, 0, 0};
  append_tag(9, 0x12345678, avc_frame(true, 0), file);
  append_tag(7, 0, Bytes(30, 1), file);                                // not a known tag type: skipped
  append_tag(18, 0x12345678, Bytes{0x02, 0, 3, 'a', 'b', 'c'}, file);  // a cue point, not metadata
  append_tag(8, 0x12345679, Bytes{0x2F, 1, 2, 3}, file);               // MP3
  const MediaIndex index = index_ok(file);
  REQUIRE(index.samples.size() == 3);
  CHECK(index.samples[0].file_offset == 15 + 4 + 11);
  CHECK(index.samples[0].dts_ms == 0x12345678);
  CHECK(index.samples[1].type == kSampleScript);
  CHECK(index.audio_codec == AudioCodec::Mp3);
  CHECK(index.duration_ms == 0x12345679);

  // An onMetaData over the copy limit stays a sample and the index builds its own.
  Bytes big = on_metadata(1.0);
  big.resize(kMaxFlvMetadataBytes + 1, 0);
  const MediaIndex with_big = index_ok(flv({{18, 0, big}, {9, 0, avc_frame(true, 0)}}));
  REQUIRE(with_big.samples.size() == 2);
  CHECK(with_big.samples[0].type == kSampleScript);
  CHECK(with_big.metadata.size() < 1000);
}

TEST_CASE("not FLV, empty, header only, and the feeding contract") {
  const std::string mp4 =
      "\0\0\0\x18"
      "ftypisom\0\0\0\0isomavc1";
  CHECK(index_flv(Bytes(mp4.begin(), mp4.end())).error().code == Errc::Malformed);
  CHECK_FALSE(index_flv(Bytes{}).ok());
  CHECK_FALSE(index_flv(Bytes{'F', 'L', 'V'}).ok());
  Bytes header_only;
  write_flv_header(true, true, header_only);
  const auto e = index_flv(header_only);
  REQUIRE_FALSE(e.ok());
  CHECK(e.error().message().find("no audio or video") != std::string::npos);

  const Bytes file = flv(typical_tags());
  FlvIndexer indexer(file.size());
  CHECK(indexer.finish().error().code == Errc::BadState);
  const auto r = indexer.feed(1, std::span(file).subspan(1));
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == Errc::BadState);
  CHECK(indexer.feed(0, file).error().code == Errc::BadState);  // failed for good
}

TEST_CASE("tag classification from the first bytes") {
  const auto classify_flv_tag = [](uint8_t type, std::span<const uint8_t> head) {
    return read_flv_tag_head(type, head, static_cast<uint32_t>(head.size()));
  };
  auto c = classify_flv_tag(9, Bytes{0x17, 0x00, 0, 0, 0});
  CHECK(c.sequence_header);
  CHECK_FALSE(c.keyframe);
  c = classify_flv_tag(9, Bytes{0x17, 0x01, 0xFF, 0xFF, 0xF6});
  CHECK(c.keyframe);
  CHECK(c.cts_ms == -10);
  c = classify_flv_tag(9, Bytes{0x17, 0x02, 0, 0, 0});  // end of sequence
  CHECK_FALSE(c.keyframe);
  CHECK_FALSE(c.sequence_header);
  c = classify_flv_tag(9, Bytes{0x14, 0x00});  // VP6 key frame
  CHECK(c.keyframe);
  CHECK(c.video_codec == VideoCodec::Vp6);
  c = classify_flv_tag(9, Bytes{0x57, 0x00});  // command frame: nothing
  CHECK_FALSE(c.keyframe);
  c = classify_flv_tag(9, Bytes{0x96, 0x00, 'h', 'v', 'c', '1', 0, 0x00, 0x00, 0x01});  // multitrack seq start
  CHECK(c.sequence_header);
  CHECK(c.video_codec == VideoCodec::Hevc);
  c = classify_flv_tag(8, Bytes{0xAF, 0x00, 0x12});
  CHECK(c.sequence_header);
  CHECK(c.audio_codec == AudioCodec::Aac);
  c = classify_flv_tag(8, Bytes{0xAF, 0x01});
  CHECK_FALSE(c.sequence_header);
  c = classify_flv_tag(8, Bytes{0x90, 'O', 'p', 'u', 's'});  // Enhanced audio SequenceStart
  CHECK(c.sequence_header);
  CHECK(c.audio_codec == AudioCodec::Opus);
  CHECK(classify_flv_tag(18, on_metadata(1)).on_metadata);
  CHECK_FALSE(classify_flv_tag(18, Bytes{0x02, 0, 3, 'a', 'b', 'c'}).on_metadata);
  c = classify_flv_tag(9, Bytes{});
  CHECK_FALSE(c.keyframe);
}
