// plan_mp4 / Mp4Builder: synthetic recordings (part_builder.hpp) turned into MP4 copies in memory,
// read back with the repo's own MP4 demuxer: every sample's bytes, offset, times and sync flag
// against the FLV's, the boxes chosen (ctts, stss, stsz, co64, edit lists, the mdat largesize),
// the tracks left out and the builder's contract.
#include <doctest/doctest.h>

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "media/mp4/box_reader.hpp"
#include "media/record/mp4_layout.hpp"
#include "media/vod/flv_indexer.hpp"
#include "media/vod/mp4_demuxer.hpp"
#include "media/vod/tag_body.hpp"
#include "unit/media/record/part_builder.hpp"

using namespace sluice;
using namespace sluice::media;
using namespace sluice::media::record;
using namespace sluice::media::record::test;
using namespace sluice::media::mp4;
using namespace sluice::media::vod;
using Span = std::span<const uint8_t>;

namespace {

// ---- reading boxes back --------------------------------------------------------------------

uint32_t fourcc_of(std::string_view s) {
  return uint32_t(uint8_t(s[0])) << 24 | uint32_t(uint8_t(s[1])) << 16 | uint32_t(uint8_t(s[2])) << 8 | uint8_t(s[3]);
}

// The payloads of the boxes of `type` in a run of boxes. A box reaching past `data` (the mdat
// after a head) ends the run.
std::vector<Span> boxes(Span data, std::string_view type) {
  std::vector<Span> out;
  size_t pos = 0;
  while (pos + kBoxHeaderSize <= data.size()) {
    auto h = parse_box_header(data.subspan(pos), UINT64_MAX);
    REQUIRE(h.ok());
    if (h->size > data.size() - pos) break;
    if (h->type == fourcc_of(type)) out.push_back(data.subspan(pos + h->header_size, h->size - h->header_size));
    pos += h->size;
  }
  return out;
}

Span only(Span data, std::string_view type) {
  const auto found = boxes(data, type);
  INFO("box " << type);
  REQUIRE(found.size() == 1);
  return found[0];
}

Span trak(Span file, size_t n) {
  const auto traks = boxes(only(file, "moov"), "trak");
  REQUIRE(traks.size() > n);
  return traks[n];
}

Span stbl(Span trak_payload) { return only(only(only(trak_payload, "mdia"), "minf"), "stbl"); }

uint32_t u32_at(Span b, size_t at) { return load_u32be(b.data() + at); }

// ---- planning ------------------------------------------------------------------------------

struct Copy {
  MediaIndex index;
  Mp4Layout layout;
  Bytes mp4;
};

Copy copy_of(const Bytes& flv) {
  auto index = index_flv(flv);
  INFO((index ? std::string() : index.error().message()));
  REQUIRE(index.ok());
  auto layout = plan_mp4(*index, flv);
  INFO((layout ? std::string() : layout.error().message()));
  REQUIRE(layout.ok());
  Copy c{std::move(*index), std::move(*layout), {}};
  c.mp4 = apply_mp4_layout(c.layout, flv);
  REQUIRE(c.mp4.size() == c.layout.final_size);
  return c;
}

Result<Mp4Layout> try_plan(const std::vector<Tag>& tags) {
  const Bytes flv = part_bytes(tags);
  auto index = index_flv(flv);
  REQUIRE(index.ok());
  return plan_mp4(*index, flv);
}

MediaIndex demux(const Bytes& mp4) {
  auto index = demux_mp4(mp4);
  INFO((index ? std::string() : index.error().message()));
  REQUIRE(index.ok());
  return std::move(*index);
}

// The FLV codec header of the synthetic bodies below, by their first bytes.
std::optional<uint8_t> header_of(uint8_t type, Span body) {
  if (type == kSampleVideo) {
    if (body[0] == 0x17 || body[0] == 0x27 || body[0] == 0x1C || body[0] == 0x2C) {
      return body[1] == 1 ? std::optional<uint8_t>(5) : std::nullopt;
    }
    if (body[0] == 0x91 || body[0] == 0xA1) return 8;  // Enhanced CodedFrames
    if (body[0] == 0x93 || body[0] == 0xA3) return 5;  // Enhanced CodedFramesX
    return std::nullopt;
  }
  if (body[0] == 0xAF) return body[1] == 1 ? std::optional<uint8_t>(2) : std::nullopt;
  if (body[0] >> 4 == 2) return 1;  // MP3
  return std::nullopt;
}

// The same, nullopt for what is not an MP4 sample (sequence headers, end of sequence, empty
// frames).
std::optional<uint8_t> synthetic_prefix(uint8_t type, Span body) {
  const auto p = header_of(type, body);
  return p && *p < body.size() ? p : std::nullopt;
}

// Every FLV frame is in the MP4, minus its FLV header, at the place the mdat order gives it, with
// the FLV's times (less `start_ms`, the movie's start) and sync flag.
void check_samples(const Bytes& flv, const Copy& c, uint32_t start_ms = 0) {
  const MediaIndex mp4 = demux(c.mp4);
  std::vector<Sample> got = mp4.samples;
  std::sort(got.begin(), got.end(), [](const Sample& a, const Sample& b) { return a.file_offset < b.file_offset; });
  size_t k = 0;
  uint64_t at = c.layout.head.size();
  for (const Sample& s : c.index.samples) {
    if (s.type == kSampleScript) continue;
    const Span body = Span(flv).subspan(s.file_offset, s.size);
    const auto prefix = synthetic_prefix(s.type, body);
    if (!prefix) continue;
    CAPTURE(k);
    REQUIRE(k < got.size());
    const Sample& m = got[k];
    CHECK(m.type == s.type);
    CHECK(m.file_offset == at);
    CHECK(m.size == s.size - *prefix);
    CHECK(c.layout.copy[k].offset == s.file_offset + *prefix);
    CHECK(c.layout.copy[k].size == m.size);
    CHECK(std::ranges::equal(Span(c.mp4).subspan(m.file_offset, m.size), body.subspan(*prefix)));
    CHECK(m.dts_ms == s.dts_ms - start_ms);
    if (s.type == kSampleVideo) {
      CHECK(m.cts_ms == s.cts_ms);
      CHECK(m.keyframe == s.keyframe);
    }
    at += m.size;
    ++k;
  }
  CHECK(k == got.size());
  CHECK(at == c.mp4.size());
  CHECK(c.layout.copy.size() == got.size());
  CHECK(c.layout.video_samples + c.layout.audio_samples == got.size());
}

// Runs of consecutive samples of one type, per type: the chunks the MP4 should have.
std::pair<uint32_t, uint32_t> runs(const MediaIndex& index, const Bytes& flv) {
  uint32_t video = 0, audio = 0;
  uint8_t last = 0;
  for (const Sample& s : index.samples) {
    if (s.type == kSampleScript || !synthetic_prefix(s.type, Span(flv).subspan(s.file_offset, s.size))) continue;
    if (s.type != last) (s.type == kSampleVideo ? video : audio)++;
    last = s.type;
  }
  return {video, audio};
}

Bytes avc_frame_cts(bool key, size_t payload, int32_t cts) {
  Bytes b = avc_frame(key, payload);
  store_u24be(b.data() + 2, static_cast<uint32_t>(cts) & 0xFFFFFF);
  return b;
}

Bytes mp3_frame(size_t payload) {
  Bytes b{0x2F, 0xFF, 0xFB, 0x90, 0x64};  // legacy MP3 44 kHz stereo; MPEG-1 layer III 44.1 kHz stereo
  b.resize(b.size() + payload, uint8_t(payload));
  return b;
}

}  // namespace

TEST_CASE("an AVC + AAC recording: ftyp, moov, mdat, and every frame round-trips through the MP4 demuxer") {
  const Bytes flv = part_bytes(recording_tags(100));
  const Copy c = copy_of(flv);
  CHECK(c.layout.notes.empty());
  CHECK(c.layout.left_out == 0);
  CHECK(c.layout.video_samples == 100);
  CHECK(c.layout.audio_samples > 150);
  check_samples(flv, c);

  // Faststart: ftyp, then moov, then mdat, whose header ends the head.
  const Span mp4(c.mp4);
  CHECK(u32_at(mp4, 4) == fourcc_of("ftyp"));
  const Span ftyp = only(mp4, "ftyp");
  CHECK(u32_at(ftyp, 0) == fourcc_of("isom"));
  for (size_t i = 0; i < 4; ++i)
    CHECK(u32_at(ftyp, 8 + 4 * i) == fourcc_of(std::string_view("isomiso2avc1mp41").substr(4 * i, 4)));
  CHECK(u32_at(mp4, ftyp.size() + 8 + 4) == fourcc_of("moov"));
  const size_t mdat_at = c.layout.head.size() - 8;
  CHECK(u32_at(mp4, mdat_at + 4) == fourcc_of("mdat"));
  CHECK(u32_at(mp4, mdat_at) == c.mp4.size() - mdat_at);

  const MediaIndex m = demux(c.mp4);
  CHECK(m.video_codec == VideoCodec::Avc);
  CHECK(m.audio_codec == AudioCodec::Aac);
  CHECK(m.audio_sample_rate == 44100);
  CHECK(m.audio_channels == 2);
  // The configurations come back as the FLV's sequence headers.
  CHECK(m.video_sequence_header == c.index.video_sequence_header);
  CHECK(m.audio_sequence_header == c.index.audio_sequence_header);
  CHECK(m.keyframes.size() == 4);
  CHECK(m.duration_ms == c.layout.duration_ms);
  // The last frame of each track lasts as long as the one before: video ends at 99 * 40 + 40,
  // audio (every 23 ms up to 4000) at 3979 + 23.
  CHECK(c.layout.duration_ms == 4002);

  // One chunk per run of consecutive samples of a track; stsc is run-length.
  const auto [video_runs, audio_runs] = runs(c.index, flv);
  const Span video = stbl(trak(mp4, 0)), audio = stbl(trak(mp4, 1));
  CHECK(u32_at(only(video, "stco"), 4) == video_runs);
  CHECK(u32_at(only(audio, "stco"), 4) == audio_runs);
  CHECK(u32_at(only(video, "stsc"), 4) < video_runs);
  // Every frame has cts 40 (part_builder): one ctts run, version 0. Keyframes every 25th: stss.
  const Span ctts = only(video, "ctts");
  CHECK(ctts[0] == 0);
  CHECK(u32_at(ctts, 4) == 1);
  CHECK(u32_at(only(video, "stss"), 4) == 4);
  CHECK(boxes(audio, "stss").empty());
  CHECK(boxes(audio, "ctts").empty());
  CHECK(boxes(trak(mp4, 0), "edts").empty());  // both tracks start at 0

  // The head is about 12 bytes per sample here, far below the copy itself.
  CHECK(c.layout.head.size() < 1200 + 20 * (c.layout.video_samples + c.layout.audio_samples));
  // The same FLV gives the same bytes.
  CHECK(copy_of(flv).layout.head == c.layout.head);
}

TEST_CASE("HEVC: Enhanced RTMP CodedFrames (8-byte header), CodedFramesX (5) and legacy codec id 12") {
  SUBCASE("Enhanced RTMP") {
    auto tags = recording_tags(60, true);
    // Every third frame as CodedFramesX (no CTS field); the others with a CTS of 80 ms.
    for (Tag& t : tags) {
      if (t.type != 9 || t.body[0] == 0x90) continue;
      if (t.ts % 120 == 40) {
        t.body.erase(t.body.begin() + 5, t.body.begin() + 8);
        t.body[0] = uint8_t((t.body[0] & 0xF0) | 3);
      } else {
        t.body[7] = 80;
      }
    }
    const Bytes flv = part_bytes(tags);
    const Copy c = copy_of(flv);
    CHECK(c.layout.notes.empty());
    CHECK(c.layout.video_samples == 60);
    check_samples(flv, c);
    const MediaIndex m = demux(c.mp4);
    CHECK(m.video_codec == VideoCodec::Hevc);
    CHECK(m.video_sequence_header == kHevcSequenceStart);
    CHECK(u32_at(only(stbl(trak(c.mp4, 0)), "stsd"), 8 + 4) == fourcc_of("hvc1"));
  }
  SUBCASE("legacy codec id 12") {
    auto tags = recording_tags(30);
    for (Tag& t : tags) {
      if (t.type == 9) t.body[0] = uint8_t((t.body[0] & 0xF0) | 12);
    }
    const Bytes flv = part_bytes(tags);
    const Copy c = copy_of(flv);
    CHECK(c.layout.notes.empty());
    CHECK(c.layout.video_samples == 30);
    check_samples(flv, c);
    CHECK(demux(c.mp4).video_codec == VideoCodec::Hevc);
  }
}

TEST_CASE("composition offsets: none gives no ctts, negative ones ctts version 1") {
  std::vector<Tag> tags{{9, 0, kAvcSequenceHeader}};
  SUBCASE("all zero, all keyframes, one size: no ctts, no stss, a constant stsz") {
    for (uint32_t i = 0; i < 20; ++i) tags.push_back({9, i * 40, avc_frame_cts(true, 50, 0)});
    const Bytes flv = part_bytes(tags);
    const Copy c = copy_of(flv);
    check_samples(flv, c);
    const Span video = stbl(trak(c.mp4, 0));
    CHECK(boxes(video, "ctts").empty());
    CHECK(boxes(video, "stss").empty());
    CHECK(u32_at(only(video, "stsz"), 4) == 50);  // sample_size
    CHECK(u32_at(only(video, "stts"), 4) == 1);   // one run of 40 ms
    CHECK(u32_at(only(video, "stsc"), 4) == 1);
    CHECK(u32_at(only(video, "stco"), 4) == 1);  // one chunk: nothing between the frames
  }
  SUBCASE("negative") {
    tags.push_back({8, 0, kAacSequenceHeader});
    for (uint32_t i = 0; i < 20; ++i) {
      tags.push_back({8, i * 40, aac_frame(10)});
      tags.push_back({9, 100 + i * 40, avc_frame_cts(i == 0, 50 + i, i % 2 ? -20 : 40)});
    }
    const Bytes flv = part_bytes(tags);
    const Copy c = copy_of(flv);
    check_samples(flv, c);
    const Span ctts = only(stbl(trak(c.mp4, 0)), "ctts");
    CHECK(ctts[0] == 1);
    CHECK(u32_at(ctts, 4) == 20);
    // The video starts 100 ms after the audio: an empty edit of 100 ms, then the media.
    const Span elst = only(only(trak(c.mp4, 0), "edts"), "elst");
    CHECK(u32_at(elst, 4) == 2);
    CHECK(u32_at(elst, 8) == 100);
    CHECK(u32_at(elst, 12) == 0xFFFFFFFF);
    CHECK(u32_at(elst, 20) == 20 * 40);
    CHECK(u32_at(elst, 24) == 0);
    CHECK(c.layout.duration_ms == 100 + 20 * 40);
  }
}

TEST_CASE("a track that starts late is delayed by an edit list; the other one is not") {
  std::vector<Tag> tags{{9, 0, kAvcSequenceHeader}, {8, 0, kAacSequenceHeader}};
  for (uint32_t i = 0; i < 30; ++i) {
    tags.push_back({9, i * 40, avc_frame(i % 10 == 0, 60)});
    if (i * 40 >= 500) tags.push_back({8, i * 40 + 3, aac_frame(30)});
  }
  const Bytes flv = part_bytes(tags);
  const Copy c = copy_of(flv);
  check_samples(flv, c);
  CHECK(boxes(trak(c.mp4, 0), "edts").empty());
  CHECK(u32_at(only(only(trak(c.mp4, 1), "edts"), "elst"), 8) == 523);
  const MediaIndex m = demux(c.mp4);
  const auto first_audio =
      std::find_if(m.samples.begin(), m.samples.end(), [](const Sample& s) { return s.type == kSampleAudio; });
  REQUIRE(first_audio != m.samples.end());
  CHECK(first_audio->dts_ms == 523);
}

TEST_CASE("an FLV whose clock starts late: the movie starts at its first sample") {
  std::vector<Tag> tags{{9, 0, kAvcSequenceHeader}, {8, 0, kAacSequenceHeader}};
  for (uint32_t i = 0; i < 30; ++i) {
    tags.push_back({9, 3'600'000 + i * 40, avc_frame(i % 10 == 0, 60)});
    tags.push_back({8, 3'600'010 + i * 40, aac_frame(30)});
  }
  const Bytes flv = part_bytes(tags);
  const Copy c = copy_of(flv);
  check_samples(flv, c, 3'600'000);
  CHECK(boxes(trak(c.mp4, 0), "edts").empty());
  CHECK(u32_at(only(only(trak(c.mp4, 1), "edts"), "elst"), 8) == 10);
  CHECK(c.layout.duration_ms == 10 + 30 * 40);
}

TEST_CASE("decode times that go back are held at the previous one; presentation times are kept") {
  std::vector<Tag> tags{{9, 0, kAvcSequenceHeader}};
  const uint32_t dts[] = {0, 40, 80, 60, 120, 160};
  for (uint32_t i = 0; i < 6; ++i) tags.push_back({9, dts[i], avc_frame_cts(i == 0, 30, 40)});
  const Bytes flv = part_bytes(tags);
  const Copy c = copy_of(flv);
  const MediaIndex m = demux(c.mp4);
  REQUIRE(m.samples.size() == 6);
  CHECK(m.samples[3].dts_ms == 80);
  CHECK(m.samples[3].cts_ms == 20);  // pts 100, as in the FLV
  CHECK(m.samples[4].dts_ms == 120);
  CHECK(m.samples[4].cts_ms == 40);
}

TEST_CASE("past 4 GiB: a 64-bit mdat size, and co64 for the tracks with chunks there") {
  // 300 frames of 16 MB (4.8 GB of samples) and a few AAC frames. Nothing that large is allocated:
  // the builder sees only the heads.
  MediaIndex index;
  index.video_sequence_header = kAvcSequenceHeader;
  index.audio_sequence_header = kAacSequenceHeader;
  Mp4Builder builder(index);
  const Bytes video_head = avc_frame(true, 11);
  const Bytes audio_head = aac_frame(14);
  constexpr uint32_t kFrame = 16'000'000;  // the last chunk (after frame 280) starts at 4.48 GB
  // Audio every 20 frames (chunks start all along the file), or only in the first 5 (every chunk
  // starts in the first 100 MB, though samples lie past 4 GiB).
  bool throughout = false;
  SUBCASE("chunks past 4 GiB") { throughout = true; }
  SUBCASE("chunks before 4 GiB") { throughout = false; }
  CAPTURE(throughout);
  uint64_t offset = 13 + 11;
  std::vector<uint64_t> expected;  // MP4 sample offsets from the mdat payload, in mdat order
  uint64_t payload = 0;
  uint32_t audio = 0;
  for (uint32_t i = 0; i < 300; ++i) {
    if (throughout ? i % 20 == 0 : i < 5) {
      const Sample a{.file_offset = offset, .size = 100, .dts_ms = i * 40, .type = kSampleAudio};
      REQUIRE(builder.add(a, audio_head).ok());
      expected.push_back(payload);
      payload += 98;
      offset += 100 + 15;
      ++audio;
    }
    const Sample v{.file_offset = offset,
                   .size = kFrame,
                   .dts_ms = i * 40,
                   .cts_ms = 0,
                   .type = kSampleVideo,
                   .keyframe = i % 25 == 0};
    REQUIRE(builder.add(v, video_head).ok());
    expected.push_back(payload);
    payload += kFrame - 5;
    offset += kFrame + 15;
  }
  auto layout = builder.finish();
  REQUIRE(layout.ok());
  const Span head(layout->head);
  CHECK(layout->final_size == head.size() + payload);
  // mdat: size 1, then the 64-bit largesize.
  CHECK(u32_at(head, head.size() - 16) == 1);
  CHECK(u32_at(head, head.size() - 12) == fourcc_of("mdat"));
  CHECK((uint64_t{u32_at(head, head.size() - 8)} << 32 | u32_at(head, head.size() - 4)) == payload + 16);
  const char* offsets = throughout ? "co64" : "stco";
  const char* other = throughout ? "stco" : "co64";
  for (size_t t = 0; t < 2; ++t) {
    CAPTURE(t);
    CHECK(boxes(stbl(trak(head, t)), other).empty());
    CHECK(u32_at(only(stbl(trak(head, t)), offsets), 4) == (throughout ? 15 : 5));  // one chunk after each audio frame
  }

  // The demuxer reads only the head (faststart) and finds every sample where the copy puts it.
  Mp4Demuxer demuxer(layout->final_size);
  while (!demuxer.done()) {
    const ByteRange need = demuxer.next_request();
    REQUIRE(need.end() <= head.size());
    REQUIRE(demuxer.feed(need.offset, head.subspan(need.offset, need.size)).ok());
  }
  auto m = demuxer.finish();
  REQUIRE(m.ok());
  std::vector<Sample> got = m->samples;
  std::sort(got.begin(), got.end(), [](const Sample& a, const Sample& b) { return a.file_offset < b.file_offset; });
  REQUIRE(got.size() == expected.size());
  REQUIRE(got.size() == 300 + audio);
  for (size_t k = 0; k < got.size(); ++k) {
    CAPTURE(k);
    CHECK(got[k].file_offset == head.size() + expected[k]);
    CHECK(layout->copy[k].size == got[k].size);
  }
  CHECK(got.back().file_offset > (uint64_t{1} << 32));
}

TEST_CASE("codecs an MP4 copy cannot hold: the track is left out and said so") {
  SUBCASE("Speex audio next to AVC video") {
    auto tags = recording_tags(50);
    uint32_t audio_frames = 0;
    for (Tag& t : tags) {
      if (t.type == 8 && t.body[1] == 1) t.body[0] = 0xB2, ++audio_frames;  // Speex, 16 kHz mono
    }
    tags.erase(std::find_if(tags.begin(), tags.end(), [](const Tag& t) { return t.type == 8; }));  // its AAC config
    auto layout = try_plan(tags);
    REQUIRE(layout.ok());
    CHECK(layout->video_samples == 50);
    CHECK(layout->audio_samples == 0);
    CHECK(layout->left_out == audio_frames);
    REQUIRE(layout->notes.size() == 1);
    CHECK(layout->notes[0] ==
          "audio: Speex cannot go in an MP4; track left out (" + std::to_string(audio_frames) + " frames)");
    const Bytes flv = part_bytes(tags);
    const Copy c = copy_of(flv);
    const MediaIndex m = demux(c.mp4);
    CHECK(m.has_video);
    CHECK_FALSE(m.has_audio);
  }
  SUBCASE("VP6 video only: nothing to copy") {
    std::vector<Tag> tags;
    for (uint32_t i = 0; i < 10; ++i) tags.push_back({9, i * 40, Bytes{uint8_t(i ? 0x24 : 0x14), 0, 1, 2, 3}});
    auto layout = try_plan(tags);
    REQUIRE_FALSE(layout.ok());
    CHECK(layout.error().code == Errc::Unsupported);
    CHECK(layout.error().context.find("VP6 cannot go in an MP4") != std::string::npos);
  }
  SUBCASE("MP3 audio is copied, described by its first frame header") {
    std::vector<Tag> tags{{9, 0, kAvcSequenceHeader}};
    for (uint32_t i = 0; i < 20; ++i) {
      tags.push_back({9, i * 40, avc_frame(i == 0, 40)});
      tags.push_back({8, i * 26, mp3_frame(200)});
    }
    const Bytes flv = part_bytes(tags);
    const Copy c = copy_of(flv);
    CHECK(c.layout.notes.empty());
    check_samples(flv, c);
    const MediaIndex m = demux(c.mp4);
    CHECK(m.audio_codec == AudioCodec::Mp3);
    CHECK(m.audio_sample_rate == 44100);
    CHECK(m.audio_channels == 2);
  }
}

TEST_CASE("sequence headers: sent again unchanged, changed mid-stream, or late") {
  SUBCASE("the same one again is ignored") {
    auto tags = recording_tags(100);
    tags.insert(tags.begin() + 60, Tag{9, 1000, kAvcSequenceHeader});
    const Bytes flv = part_bytes(tags);
    const Copy c = copy_of(flv);
    CHECK(c.layout.notes.empty());
    CHECK(c.layout.video_samples == 100);
    check_samples(flv, c);
  }
  SUBCASE("a different one ends the video track there") {
    auto tags = recording_tags(100);
    Bytes changed = kAvcSequenceHeader;
    changed[6] = 0x4D;  // Main profile instead of High
    const auto at = std::find_if(tags.begin(), tags.end(), [](const Tag& t) { return t.type == 9 && t.ts == 2000; });
    REQUIRE(at != tags.end());
    tags.insert(at, Tag{9, 2000, changed});
    auto layout = try_plan(tags);
    REQUIRE(layout.ok());
    CHECK(layout->video_samples == 50);
    CHECK(layout->audio_samples > 150);
    CHECK(layout->left_out == 50);
    REQUIRE(layout->notes.size() == 1);
    CHECK(layout->notes[0] == "video: the sequence header changed at 2000 ms; the track ends there (50 frames)");
  }
  SUBCASE("frames before the first one are left out") {
    auto tags = recording_tags(40);
    const auto header = std::find_if(tags.begin(), tags.end(), [](const Tag& t) { return t.type == 9; });
    const Tag config = *header;
    tags.erase(header);
    // After the first 3 video frames (all samples of the FLV then, not the index's header).
    size_t seen = 0;
    const auto after = std::find_if(tags.begin(), tags.end(), [&](const Tag& t) { return t.type == 9 && ++seen == 4; });
    tags.insert(after, config);
    auto layout = try_plan(tags);
    REQUIRE(layout.ok());
    CHECK(layout->video_samples == 37);
    REQUIRE(layout->notes.size() == 1);
    CHECK(layout->notes[0] == "video: frames before the first sequence header left out (3 frames)");
  }
  SUBCASE("none at all: the track is left out") {
    auto tags = recording_tags(40);
    tags.erase(std::find_if(tags.begin(), tags.end(), [](const Tag& t) { return t.type == 9 && t.body[1] == 0; }));
    auto layout = try_plan(tags);
    REQUIRE(layout.ok());
    CHECK(layout->video_samples == 0);
    REQUIRE(layout->notes.size() == 1);
    CHECK(layout->notes[0] == "video: no usable H.264 sequence header; track left out (40 frames)");
    CHECK(demux(apply_mp4_layout(*layout, part_bytes(tags))).has_video == false);
  }
  SUBCASE("an AAC one that does not parse leaves the audio out") {
    auto tags = recording_tags(20);
    for (Tag& t : tags) {
      if (t.type == 8 && t.body[1] == 0) t.body = {0xAF, 0x00, 0x00};  // object type 0
    }
    auto layout = try_plan(tags);
    REQUIRE(layout.ok());
    CHECK(layout->audio_samples == 0);
    REQUIRE(layout->notes.size() == 1);
    CHECK(layout->notes[0].starts_with("audio: no usable AAC sequence header; track left out"));
  }
}

TEST_CASE("AVC end-of-sequence tags and empty frames are not samples, and nothing is lost") {
  auto tags = recording_tags(30);
  tags.push_back({9, 1200, Bytes{0x27, 0x01, 0, 0, 0}});  // an empty frame
  tags.push_back({9, 1200, Bytes{0x17, 0x02, 0, 0, 0}});  // ffmpeg's end of sequence
  const Bytes flv = part_bytes(tags);
  const Copy c = copy_of(flv);
  CHECK(c.layout.notes.empty());
  CHECK(c.layout.left_out == 0);
  CHECK(c.layout.video_samples == 30);
  check_samples(flv, c);
}

TEST_CASE("nothing to copy is an error") {
  SUBCASE("sequence headers only") {
    auto layout = try_plan(recording_tags(0));
    REQUIRE_FALSE(layout.ok());
    CHECK(layout.error().code == Errc::Malformed);
  }
  SUBCASE("an empty index") {
    Mp4Builder builder{MediaIndex{}};
    auto layout = builder.finish();
    REQUIRE_FALSE(layout.ok());
    CHECK(layout.error().code == Errc::Malformed);
  }
  SUBCASE("multitrack packets only") {
    std::vector<Tag> tags;
    for (uint32_t i = 0; i < 5; ++i) tags.push_back({9, i * 40, Bytes{0x96, 0x01, 'h', 'v', 'c', '1', 0, 0, 0, 1}});
    auto layout = try_plan(tags);
    REQUIRE_FALSE(layout.ok());
    CHECK(layout.error().code == Errc::Unsupported);
    CHECK(layout.error().context.find("multitrack") != std::string::npos);
  }
}

TEST_CASE("the builder's contract: head sizes, short heads, the sample limit, one finish") {
  MediaIndex index;
  index.video_sequence_header = kAvcSequenceHeader;
  const Bytes frame = avc_frame(true, 30);
  const Sample v{
      .file_offset = 100, .size = static_cast<uint32_t>(frame.size()), .type = kSampleVideo, .keyframe = true};
  const Sample script{.file_offset = 10, .size = 300, .type = kSampleScript};
  const Sample header{.file_offset = 10, .size = 300, .type = kSampleVideo, .sequence_header = true};
  const Sample tiny{.file_offset = 10, .size = 3, .type = kSampleAudio};
  CHECK(Mp4Builder::head_bytes(v) == kFlvTagHeadBytes);
  CHECK(Mp4Builder::head_bytes(script) == 0);
  CHECK(Mp4Builder::head_bytes(header) == 300);
  CHECK(Mp4Builder::head_bytes(tiny) == 3);

  SUBCASE("a short head is the caller's bug, and sticks") {
    Mp4Builder builder(index);
    REQUIRE(builder.add(script, {}).ok());
    auto added = builder.add(v, Span(frame).first(4));
    REQUIRE_FALSE(added.ok());
    CHECK(added.error().code == Errc::BadState);
    CHECK(builder.add(v, frame).error().code == Errc::BadState);
    CHECK(builder.finish().error().code == Errc::BadState);
  }
  SUBCASE("past max_samples") {
    Mp4Builder builder(index, 3);
    Sample s = v;
    for (int i = 0; i < 3; ++i, s.dts_ms += 40) REQUIRE(builder.add(s, frame).ok());
    auto added = builder.add(s, frame);
    REQUIRE_FALSE(added.ok());
    CHECK(added.error().code == Errc::LimitExceeded);
    CHECK(builder.finish().error().code == Errc::LimitExceeded);
  }
  SUBCASE("finish once") {
    Mp4Builder builder(index);
    REQUIRE(builder.add(v, frame).ok());
    auto layout = builder.finish();
    REQUIRE(layout.ok());
    CHECK(layout->video_samples == 1);
    CHECK(layout->duration_ms == 0);  // a lone sample lasts 0
    CHECK(builder.finish().error().code == Errc::BadState);
    CHECK(builder.add(v, frame).error().code == Errc::BadState);
  }
  SUBCASE("plan_mp4 refuses an index that does not fit the bytes") {
    const Bytes flv = part_bytes(recording_tags(10));
    auto idx = index_flv(flv);
    REQUIRE(idx.ok());
    auto layout = plan_mp4(*idx, Span(flv).first(flv.size() / 2));
    REQUIRE_FALSE(layout.ok());
    CHECK(layout.error().code == Errc::Truncated);
  }
}
