// MediaIndex: seeking, read planning, tag prefixes and sequence header bodies.
#include <doctest/doctest.h>

#include <vector>

#include "media/vod/media_index.hpp"
#include "media/vod/tag_body.hpp"

using namespace sluice;
using namespace sluice::media;
using namespace sluice::media::vod;
using sluice::Errc;
using Bytes = std::vector<uint8_t>;

namespace {

Sample sample(uint8_t type, uint32_t dts, uint64_t offset, uint32_t size, bool key = false, int32_t cts = 0) {
  Sample s;
  s.type = type;
  s.dts_ms = dts;
  s.file_offset = offset;
  s.size = size;
  s.keyframe = key;
  s.cts_ms = cts;
  return s;
}

// Video at 0, 40, 80... (keyframes at 0 and 200 ms), audio between, adjacent in the file.
MediaIndex interleaved() {
  MediaIndex index;
  index.container = Container::Mp4;
  index.has_video = index.has_audio = true;
  index.video_codec = VideoCodec::Avc;
  index.audio_codec = AudioCodec::Aac;
  uint64_t offset = 1000;
  for (uint32_t i = 0; i < 10; ++i) {
    index.samples.push_back(sample(kSampleVideo, i * 40, offset, 100, i % 5 == 0));
    offset += 100;
    index.samples.push_back(sample(kSampleAudio, i * 40 + 20, offset, 10));
    offset += 10;
  }
  index.keyframes = {{0, 0}, {10, 200}};
  return index;
}

Bytes bytes_of(const TagPrefix& p) { return Bytes(p.span().begin(), p.span().end()); }

}  // namespace

TEST_CASE("seek goes to the keyframe at or before the time") {
  const MediaIndex index = interleaved();
  CHECK(index.seek(0) == 0);
  CHECK(index.seek(199) == 0);
  CHECK(index.seek(200) == 10);
  CHECK(index.seek(1000000) == 10);
  MediaIndex late = index;
  late.keyframes = {{4, 80}};
  CHECK(late.seek(10) == 4);  // before the first keyframe: the first keyframe
  CHECK(MediaIndex{}.seek(100) == 0);
}

TEST_CASE("plan_read covers adjacent samples in one range") {
  const MediaIndex index = interleaved();
  ReadPlan p = index.plan_read(0, 20, 1 << 20);
  CHECK(p.first == 0);
  CHECK(p.end == 20);
  CHECK(p.bytes.offset == 1000);
  CHECK(p.bytes.size == 1100);

  p = index.plan_read(3, 20, 250);  // audio 10 + video 100 + audio 10 + video 100 = 220 fits, +10 = 230, +100 no
  CHECK(p.first == 3);
  CHECK(p.end == 8);
  CHECK(p.bytes.offset == 1000 + 110 + 100);
  CHECK(p.bytes.size == 230);

  p = index.plan_read(0, 20, 10);  // the first sample alone is bigger than the budget: still one
  CHECK(p.end == 1);
  CHECK(p.bytes.size == 100);

  p = index.plan_read(5, 7, 1 << 20);  // stops at `end`
  CHECK(p.end == 7);
  p = index.plan_read(25, 30, 100);  // past the samples: empty
  CHECK(p.first == p.end);
  CHECK(p.bytes.size == 0);
}

TEST_CASE("plan_read shrinks over badly interleaved samples and slices the read") {
  MediaIndex index = interleaved();
  index.samples[1].file_offset = 900000;  // the first audio sample is far away
  ReadPlan p = index.plan_read(0, 20, 64 * 1024);
  CHECK(p.end == 1);
  p = index.plan_read(1, 20, 64 * 1024);
  CHECK(p.end == 2);
  CHECK(p.bytes.offset == 900000);

  const ReadPlan whole = interleaved().plan_read(0, 20, 1 << 20);
  Bytes buffer(whole.bytes.size);
  for (size_t i = 0; i < buffer.size(); ++i) buffer[i] = uint8_t(i);
  const MediaIndex normal = interleaved();
  auto third = whole.sample_bytes(buffer, normal.samples[2]);
  REQUIRE(third.ok());
  CHECK(third->size() == 100);
  CHECK((*third)[0] == uint8_t(110));
  auto short_read = whole.sample_bytes(std::span(buffer).first(500), normal.samples[19]);
  REQUIRE_FALSE(short_read.ok());
  CHECK(short_read.error().code == Errc::Truncated);
  CHECK(whole.sample_bytes(buffer, sample(kSampleAudio, 0, 5, 10)).error().code == Errc::Malformed);
  CHECK(whole.sample_bytes(buffer, sample(kSampleAudio, 0, 0, 0))->empty());
}

TEST_CASE("MP4 tag prefixes") {
  MediaIndex index = interleaved();
  auto key = tag_prefix(index, sample(kSampleVideo, 0, 0, 10, true, 80));
  REQUIRE(key.ok());
  CHECK(bytes_of(*key) == Bytes{0x17, 0x01, 0, 0, 80});
  auto inter = tag_prefix(index, sample(kSampleVideo, 0, 0, 10, false, -1));
  CHECK(bytes_of(*inter) == Bytes{0x27, 0x01, 0xFF, 0xFF, 0xFF});
  CHECK(bytes_of(*tag_prefix(index, sample(kSampleAudio, 0, 0, 10))) == Bytes{0xAF, 0x01});

  index.video_codec = VideoCodec::Hevc;
  CHECK(bytes_of(*tag_prefix(index, sample(kSampleVideo, 0, 0, 10, false, 40))) ==
        Bytes{0xA1, 'h', 'v', 'c', '1', 0, 0, 40});

  index.audio_codec = AudioCodec::Mp3;
  index.audio_sample_rate = 22050;
  index.audio_channels = 1;
  CHECK(bytes_of(*tag_prefix(index, sample(kSampleAudio, 0, 0, 10))) == Bytes{0x2A});  // 2<<4 | 2<<2 | 1<<1 | 0
  index.audio_sample_rate = 8000;
  CHECK(bytes_of(*tag_prefix(index, sample(kSampleAudio, 0, 0, 10))) == Bytes{0xE2});  // MP3 8 kHz

  // Errors: a type or codec the index does not have, CTS outside SI24, too large for RTMP.
  CHECK(tag_prefix(index, sample(kSampleScript, 0, 0, 10)).error().code == Errc::Malformed);
  index.video_codec = VideoCodec::Unknown;
  CHECK(tag_prefix(index, sample(kSampleVideo, 0, 0, 10)).error().code == Errc::Malformed);
  index.video_codec = VideoCodec::Avc;
  CHECK(tag_prefix(index, sample(kSampleVideo, 0, 0, 10, true, 1 << 23)).error().code == Errc::Malformed);
  CHECK(tag_prefix(index, sample(kSampleVideo, 0, 0, kMaxTagBody - 4)).error().code == Errc::LimitExceeded);
  CHECK(tag_prefix(index, sample(kSampleVideo, 0, 0, kMaxTagBody - 5)).ok());
}

TEST_CASE("FLV samples have no prefix, and sample_to_tag_body appends") {
  MediaIndex index;
  index.container = Container::Flv;
  const Sample s = sample(kSampleVideo, 0, 0, 3, true);
  auto p = tag_prefix(index, s);
  REQUIRE(p.ok());
  CHECK(p->size == 0);
  Bytes out{9};
  const Bytes body{1, 2, 3};
  REQUIRE(sample_to_tag_body(index, s, body, out).ok());
  CHECK(out == Bytes{9, 1, 2, 3});
  CHECK(sample_to_tag_body(index, s, Bytes{1}, out).error().code == Errc::Malformed);

  MediaIndex mp4 = interleaved();
  Bytes tag;
  REQUIRE(sample_to_tag_body(mp4, sample(kSampleAudio, 0, 0, 2), Bytes{7, 8}, tag).ok());
  CHECK(tag == Bytes{0xAF, 0x01, 7, 8});
}

TEST_CASE("sequence header bodies") {
  CHECK(avc_sequence_header(Bytes{1, 2}) == Bytes{0x17, 0x00, 0, 0, 0, 1, 2});
  CHECK(hevc_sequence_header(Bytes{1, 2}) == Bytes{0x90, 'h', 'v', 'c', '1', 1, 2});
  CHECK(aac_sequence_header(Bytes{0x12, 0x10}) == Bytes{0xAF, 0x00, 0x12, 0x10});
}

TEST_CASE("memory per sample") {
  MediaIndex index = interleaved();
  index.samples.shrink_to_fit();
  index.keyframes.shrink_to_fit();
  CHECK(sizeof(Sample) == 24);
  CHECK(index.memory_bytes() == 20 * 24 + 2 * 8);
}
