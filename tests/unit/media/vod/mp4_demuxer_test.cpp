// MP4 demuxer: small movies built by hand in memory (moov first and last, co64, ctts v1, stsc runs,
// edit lists, multi-track, audio-only) and malformed ones (lying sizes, nesting, absurd counts,
// fragmented files).
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "media/mp4/box_reader.hpp"
#include "media/vod/mp4_demuxer.hpp"
#include "media/vod/mp4_movie.hpp"
#include "media/vod/tag_body.hpp"
#include "protocol/amf0.hpp"

using namespace sluice;
using namespace sluice::media;
using namespace sluice::media::mp4;
using namespace sluice::media::vod;
using sluice::Errc;
using Bytes = std::vector<uint8_t>;

namespace {

// ---- byte helpers -------------------------------------------------------------------------

void put16(Bytes& b, uint32_t v) {
  b.push_back(uint8_t(v >> 8));
  b.push_back(uint8_t(v));
}
void put32(Bytes& b, uint32_t v) {
  for (int s = 24; s >= 0; s -= 8) b.push_back(uint8_t(v >> s));
}
void put64(Bytes& b, uint64_t v) {
  put32(b, uint32_t(v >> 32));
  put32(b, uint32_t(v));
}
void append(Bytes& b, const Bytes& more) { b.insert(b.end(), more.begin(), more.end()); }

Bytes box(const char* type, const Bytes& payload) {
  Bytes b;
  put32(b, uint32_t(8 + payload.size()));
  b.insert(b.end(), type, type + 4);
  append(b, payload);
  return b;
}
Bytes full(const char* type, uint8_t version, const Bytes& body) {
  Bytes p{version, 0, 0, 0};
  append(p, body);
  return box(type, p);
}
Bytes cat(std::initializer_list<Bytes> parts) {
  Bytes out;
  for (const auto& p : parts) append(out, p);
  return out;
}

// A minimal AVCDecoderConfigurationRecord (no parameter sets) and AAC-LC 44.1 kHz stereo.
const Bytes kAvcC = {1, 0x64, 0, 0x1F, 0xFF, 0xE0, 0x00};
const Bytes kAsc = {0x12, 0x10};

Bytes visual_entry(const char* type, const char* config_type, const Bytes& config) {
  Bytes p(6, 0);
  put16(p, 1);  // data_reference_index
  p.resize(p.size() + 16, 0);
  put16(p, 320);
  put16(p, 240);
  put32(p, 0x00480000);
  put32(p, 0x00480000);
  put32(p, 0);
  put16(p, 1);
  p.resize(p.size() + 32, 0);
  put16(p, 0x18);
  put16(p, 0xFFFF);
  append(p, box(config_type, config));
  return box(type, p);
}

Bytes esds(uint8_t object_type, const Bytes& asc) {
  Bytes dsi{0x05, uint8_t(asc.size())};
  append(dsi, asc);
  Bytes dc{0x04, uint8_t(13 + dsi.size()), object_type, 0x15, 0, 0, 0};
  put32(dc, 128000);
  put32(dc, 128000);
  append(dc, dsi);
  Bytes es{0x03, uint8_t(3 + dc.size() + 3), 0, 1, 0};
  append(es, dc);
  append(es, {0x06, 0x01, 0x02});  // SLConfigDescriptor
  return full("esds", 0, es);
}

Bytes audio_entry(const char* type, const Bytes& children) {
  Bytes p(6, 0);
  put16(p, 1);
  p.resize(p.size() + 8, 0);
  put16(p, 2);   // channels
  put16(p, 16);  // sample size
  put32(p, 0);
  put32(p, 44100u << 16);
  append(p, children);
  return box(type, p);
}

// ---- movie builder ------------------------------------------------------------------------

struct TrackSpec {
  bool video = true;
  uint32_t timescale = 1000;
  std::vector<uint32_t> sizes;
  std::vector<std::pair<uint32_t, uint32_t>> stts;  // (count, delta)
  std::vector<std::pair<uint32_t, int32_t>> ctts;   // (count, offset)
  uint8_t ctts_version = 0;
  std::vector<std::pair<uint32_t, uint32_t>> stsc = {{1, 1}};  // (first_chunk, samples_per_chunk)
  std::optional<std::vector<uint32_t>> stss;
  std::optional<std::pair<uint32_t, int32_t>> edit;  // (empty duration in movie units, media_time)
  bool co64 = false;
  uint8_t stz2_bits = 0;  // 4, 8 or 16: write the sizes as a compact stz2
  Bytes entry;            // sample entry box; default avc1 or mp4a
  uint8_t fill = 0;       // first byte value of this track's samples
};

TrackSpec video_track(uint32_t n = 5) {
  TrackSpec t;
  t.sizes.assign(n, 100);
  for (uint32_t i = 0; i < n; ++i) t.sizes[i] = 100 + i;
  t.stts = {{n, 40}};
  t.stss = std::vector<uint32_t>{1, 4};
  t.entry = visual_entry("avc1", "avcC", kAvcC);
  t.fill = 0x10;
  return t;
}

TrackSpec audio_track(uint32_t n = 8) {
  TrackSpec t;
  t.video = false;
  t.timescale = 44100;
  t.sizes.assign(n, 0);
  for (uint32_t i = 0; i < n; ++i) t.sizes[i] = 20 + i;
  t.stts = {{n, 1024}};
  t.stsc = {{1, 2}};
  t.entry = audio_entry("mp4a", esds(0x40, kAsc));
  t.fill = 0x80;
  return t;
}

// Samples per chunk as the stsc runs lay them out.
std::vector<uint32_t> chunk_layout(const TrackSpec& t) {
  std::vector<uint32_t> chunks;
  uint32_t left = uint32_t(t.sizes.size());
  for (uint32_t chunk = 1; left > 0; ++chunk) {
    uint32_t per = 0;
    for (const auto& [first, n] : t.stsc)
      if (first <= chunk) per = n;
    per = std::min(per, left);
    chunks.push_back(per);
    left -= per;
  }
  return chunks;
}

Bytes sample_table(const TrackSpec& t, const std::vector<uint64_t>& chunk_offsets) {
  Bytes stsd{0, 0, 0, 1};
  append(stsd, t.entry);
  Bytes stts, ctts, stsc, stsz, stco;
  put32(stts, uint32_t(t.stts.size()));
  for (auto [c, d] : t.stts) put32(stts, c), put32(stts, d);
  put32(stsc, uint32_t(t.stsc.size()));
  for (auto [f, n] : t.stsc) put32(stsc, f), put32(stsc, n), put32(stsc, 1);
  if (t.stz2_bits) {
    put32(stsz, t.stz2_bits);  // 24 reserved bits + field_size
    put32(stsz, uint32_t(t.sizes.size()));
    for (size_t i = 0; i < t.sizes.size(); ++i) {
      if (t.stz2_bits == 16) put16(stsz, t.sizes[i]);
      if (t.stz2_bits == 8) stsz.push_back(uint8_t(t.sizes[i]));
      if (t.stz2_bits == 4 && i % 2 == 0) stsz.push_back(uint8_t(t.sizes[i] << 4));
      if (t.stz2_bits == 4 && i % 2 == 1) stsz.back() |= uint8_t(t.sizes[i] & 0x0F);
    }
  } else {
    put32(stsz, 0);
    put32(stsz, uint32_t(t.sizes.size()));
    for (uint32_t s : t.sizes) put32(stsz, s);
  }
  put32(stco, uint32_t(chunk_offsets.size()));
  for (uint64_t o : chunk_offsets) t.co64 ? put64(stco, o) : put32(stco, uint32_t(o));
  Bytes stbl = cat({full("stsd", 0, stsd), full("stts", 0, stts), full("stsc", 0, stsc),
                    full(t.stz2_bits ? "stz2" : "stsz", 0, stsz), full(t.co64 ? "co64" : "stco", 0, stco)});
  if (!t.ctts.empty()) {
    put32(ctts, uint32_t(t.ctts.size()));
    for (auto [c, o] : t.ctts) put32(ctts, c), put32(ctts, uint32_t(o));
    append(stbl, full("ctts", t.ctts_version, ctts));
  }
  if (t.stss) {
    Bytes stss;
    put32(stss, uint32_t(t.stss->size()));
    for (uint32_t n : *t.stss) put32(stss, n);
    append(stbl, full("stss", 0, stss));
  }
  return box("stbl", stbl);
}

Bytes track_box(const TrackSpec& t, const std::vector<uint64_t>& chunk_offsets) {
  Bytes mdhd(8, 0);
  put32(mdhd, t.timescale);
  put32(mdhd, 0);
  put32(mdhd, 0);
  Bytes hdlr(4, 0);
  hdlr.insert(hdlr.end(), t.video ? "vide" : "soun", (t.video ? "vide" : "soun") + 4);
  hdlr.resize(hdlr.size() + 13, 0);
  Bytes trak = full("tkhd", 0, Bytes(80, 0));
  if (t.edit) {
    Bytes elst;
    const bool empty = t.edit->first > 0;
    put32(elst, empty ? 2 : 1);
    if (empty) put32(elst, t.edit->first), put32(elst, uint32_t(-1)), put32(elst, 0x00010000);
    put32(elst, 1000), put32(elst, uint32_t(t.edit->second)), put32(elst, 0x00010000);
    append(trak, box("edts", full("elst", 0, elst)));
  }
  append(trak, box("mdia", cat({full("mdhd", 0, mdhd), full("hdlr", 0, hdlr),
                                box("minf", cat({box("dinf", {}), sample_table(t, chunk_offsets)}))})));
  return box("trak", trak);
}

struct MovieSpec {
  std::vector<TrackSpec> tracks;
  bool moov_first = false;
  uint32_t movie_timescale = 1000;
  Bytes extra_moov;             // appended inside moov (e.g. mvex)
  bool largesize_mdat = false;  // a 16-byte mdat header (size 1 + 64-bit largesize)
};

struct Built {
  Bytes file;
  // Where each track's samples are, in order, for checking.
  std::vector<std::vector<uint64_t>> sample_offsets;
};

Bytes movie_box(const MovieSpec& m, const std::vector<std::vector<uint64_t>>& chunk_offsets) {
  Bytes mvhd(8, 0);
  put32(mvhd, m.movie_timescale);
  put32(mvhd, 0);
  mvhd.resize(mvhd.size() + 80, 0);
  Bytes moov = full("mvhd", 0, mvhd);
  for (size_t i = 0; i < m.tracks.size(); ++i) append(moov, track_box(m.tracks[i], chunk_offsets[i]));
  append(moov, m.extra_moov);
  return box("moov", moov);
}

// Lays out the chunks of all tracks round-robin in one mdat, then writes the moov before or
// after it. Sample i of a track is filled with byte (fill + i).
Built build(const MovieSpec& m) {
  std::vector<std::vector<uint32_t>> layouts;
  for (const auto& t : m.tracks) layouts.push_back(chunk_layout(t));
  std::vector<std::vector<uint64_t>> dummy;
  for (const auto& l : layouts) dummy.emplace_back(l.size(), 0);
  const Bytes ftyp = box("ftyp", {'i', 's', 'o', 'm', 0, 0, 2, 0, 'i', 's', 'o', 'm'});
  const size_t moov_size = movie_box(m, dummy).size();
  const size_t mdat_header = m.largesize_mdat ? 16 : 8;
  const uint64_t mdat_payload_at = ftyp.size() + (m.moov_first ? moov_size : 0) + mdat_header;

  Built out;
  Bytes mdat;
  std::vector<std::vector<uint64_t>> chunk_offsets(m.tracks.size());
  out.sample_offsets.resize(m.tracks.size());
  std::vector<size_t> next_chunk(m.tracks.size(), 0), next_sample(m.tracks.size(), 0);
  for (bool more = true; more;) {
    more = false;
    for (size_t t = 0; t < m.tracks.size(); ++t) {
      if (next_chunk[t] >= layouts[t].size()) continue;
      more = true;
      chunk_offsets[t].push_back(mdat_payload_at + mdat.size());
      for (uint32_t k = 0; k < layouts[t][next_chunk[t]]; ++k) {
        const size_t i = next_sample[t]++;
        out.sample_offsets[t].push_back(mdat_payload_at + mdat.size());
        mdat.resize(mdat.size() + m.tracks[t].sizes[i], uint8_t(m.tracks[t].fill + i));
      }
      ++next_chunk[t];
    }
  }
  const Bytes moov = movie_box(m, chunk_offsets);
  out.file = ftyp;
  if (m.moov_first) append(out.file, moov);
  if (m.largesize_mdat) {
    put32(out.file, 1);
    out.file.insert(out.file.end(), {'m', 'd', 'a', 't'});
    put64(out.file, 16 + mdat.size());
    append(out.file, mdat);
  } else {
    append(out.file, box("mdat", mdat));
  }
  if (!m.moov_first) append(out.file, moov);
  return out;
}

MediaIndex demux_ok(const Bytes& file) {
  auto r = demux_mp4(file);
  INFO((r.ok() ? std::string() : r.error().message()));
  REQUIRE(r.ok());
  return std::move(*r);
}

sluice::Error demux_error(const Bytes& file) {
  auto r = demux_mp4(file);
  REQUIRE_FALSE(r.ok());
  return r.error();
}

std::vector<const Sample*> of_type(const MediaIndex& index, uint8_t type) {
  std::vector<const Sample*> out;
  for (const auto& s : index.samples)
    if (s.type == type) out.push_back(&s);
  return out;
}

void check_offsets(const MediaIndex& index, uint8_t type, const std::vector<uint64_t>& expected,
                   const std::vector<uint32_t>& sizes) {
  const auto samples = of_type(index, type);
  REQUIRE(samples.size() == expected.size());
  for (size_t i = 0; i < samples.size(); ++i) {
    CHECK(samples[i]->file_offset == expected[i]);
    CHECK(samples[i]->size == sizes[i]);
  }
}

}  // namespace

TEST_CASE("moov after mdat: two tracks merged in decode order") {
  MovieSpec m;
  m.tracks = {video_track(), audio_track()};
  const Built b = build(m);
  const MediaIndex index = demux_ok(b.file);

  CHECK(index.container == Container::Mp4);
  CHECK(index.has_video);
  CHECK(index.has_audio);
  CHECK(index.video_codec == VideoCodec::Avc);
  CHECK(index.audio_codec == AudioCodec::Aac);
  CHECK(index.width == 320);
  CHECK(index.height == 240);
  CHECK(index.audio_sample_rate == 44100);
  CHECK(index.audio_channels == 2);
  REQUIRE(index.samples.size() == 13);
  check_offsets(index, kSampleVideo, b.sample_offsets[0], m.tracks[0].sizes);
  check_offsets(index, kSampleAudio, b.sample_offsets[1], m.tracks[1].sizes);
  for (size_t i = 1; i < index.samples.size(); ++i) CHECK(index.samples[i - 1].dts_ms <= index.samples[i].dts_ms);

  const auto video = of_type(index, kSampleVideo);
  CHECK(video[1]->dts_ms == 40);
  CHECK(video[4]->dts_ms == 160);
  CHECK(video[0]->keyframe);
  CHECK_FALSE(video[1]->keyframe);
  CHECK(video[3]->keyframe);
  const auto audio = of_type(index, kSampleAudio);
  CHECK(audio[1]->dts_ms == 23);  // floor(1024 / 44.1)
  CHECK(audio[7]->dts_ms == 162);
  CHECK_FALSE(audio[0]->keyframe);

  REQUIRE(index.keyframes.size() == 2);
  CHECK(index.samples[index.keyframes[1].sample].dts_ms == 120);
  CHECK(index.keyframes[1].time_ms == 120);

  const Bytes avc_sh = cat({{0x17, 0, 0, 0, 0}, kAvcC});
  CHECK(index.video_sequence_header == avc_sh);
  CHECK(index.audio_sequence_header == Bytes{0xAF, 0x00, 0x12, 0x10});
  CHECK(index.file_size == b.file.size());
}

TEST_CASE("moov before mdat gives the same samples, read without touching mdat") {
  MovieSpec m;
  m.tracks = {video_track(), audio_track()};
  m.moov_first = true;
  const Built b = build(m);
  Mp4Demuxer demuxer(b.file.size());
  std::vector<ByteRange> requests;
  while (!demuxer.done()) {
    const ByteRange need = demuxer.next_request();
    requests.push_back(need);
    REQUIRE(demuxer.feed(need.offset, std::span(b.file).subspan(need.offset, need.size)).ok());
  }
  // ftyp header, moov header, then the whole moov.
  REQUIRE(requests.size() == 3);
  CHECK(requests[0].offset == 0);
  CHECK(requests[2].offset == requests[1].offset);
  CHECK(requests[2].size > 16);
  auto index = demuxer.finish();
  REQUIRE(index.ok());
  check_offsets(*index, kSampleVideo, b.sample_offsets[0], m.tracks[0].sizes);
  check_offsets(*index, kSampleAudio, b.sample_offsets[1], m.tracks[1].sizes);
  CHECK_FALSE(demuxer.finish().ok());  // the index moves out once
}

TEST_CASE("feeding the whole file at once equals feeding what was asked") {
  MovieSpec m;
  m.tracks = {video_track(), audio_track()};
  const Built b = build(m);
  Mp4Demuxer demuxer(b.file.size());
  REQUIRE(demuxer.feed(0, b.file).ok());
  REQUIRE(demuxer.done());
  auto index = demuxer.finish();
  REQUIRE(index.ok());
  CHECK(index->samples.size() == demux_ok(b.file).samples.size());
}

TEST_CASE("bytes that do not cover the request are refused") {
  MovieSpec m;
  m.tracks = {video_track()};
  const Built b = build(m);
  Mp4Demuxer demuxer(b.file.size());
  auto r = demuxer.feed(4, std::span(b.file).subspan(4, 20));
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == Errc::BadState);
  CHECK(demuxer.feed(0, b.file).error().code == Errc::BadState);  // failed for good
}

TEST_CASE("co64 chunk offsets and a 64-bit largesize mdat") {
  MovieSpec m;
  m.tracks = {video_track(), audio_track()};
  m.tracks[0].co64 = true;
  m.tracks[1].co64 = true;
  const Built b = build(m);
  const MediaIndex index = demux_ok(b.file);
  check_offsets(index, kSampleVideo, b.sample_offsets[0], m.tracks[0].sizes);
  check_offsets(index, kSampleAudio, b.sample_offsets[1], m.tracks[1].sizes);

  // The same movie with a 16-byte largesize mdat header, moov first and last.
  for (bool moov_first : {false, true}) {
    MovieSpec large = m;
    large.largesize_mdat = true;
    large.moov_first = moov_first;
    const Built lb = build(large);
    const MediaIndex li = demux_ok(lb.file);
    check_offsets(li, kSampleVideo, lb.sample_offsets[0], m.tracks[0].sizes);
    check_offsets(li, kSampleAudio, lb.sample_offsets[1], m.tracks[1].sizes);
  }
}

TEST_CASE("compact sample sizes (stz2) with 4, 8 and 16-bit fields") {
  for (uint8_t bits : {uint8_t{4}, uint8_t{8}, uint8_t{16}}) {
    MovieSpec m;
    TrackSpec v = video_track(5);
    v.sizes = bits == 4 ? std::vector<uint32_t>{3, 15, 1, 7, 9} : std::vector<uint32_t>{30, 200, 1, 255, 90};
    if (bits == 16) v.sizes[1] = 4000;
    v.stz2_bits = bits;
    m.tracks = {v, audio_track()};
    const Built b = build(m);
    INFO("bits " << int(bits));
    check_offsets(demux_ok(b.file), kSampleVideo, b.sample_offsets[0], v.sizes);
  }
  MovieSpec m;
  TrackSpec v = video_track(5);
  v.stz2_bits = 8;
  m.tracks = {v};
  Built b = build(m);
  const auto at =
      std::search(b.file.begin(), b.file.end(), std::begin("stz2"), std::begin("stz2") + 4) - b.file.begin();
  b.file[at + 4 + 4 + 3] = 12;  // field size 12 does not exist
  CHECK(demux_error(b.file).code == Errc::Malformed);
}

TEST_CASE("a configured sample limit") {
  MovieSpec m;
  m.tracks = {video_track(), audio_track()};
  const Built b = build(m);
  Mp4Demuxer::Limits limits;
  limits.max_samples = 12;
  Mp4Demuxer demuxer(b.file.size(), limits);
  const auto r = demuxer.feed(0, b.file);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == Errc::LimitExceeded);
  limits.max_samples = 13;
  Mp4Demuxer enough(b.file.size(), limits);
  CHECK(enough.feed(0, b.file).ok());
  limits.max_moov_bytes = 100;
  Mp4Demuxer small_moov(b.file.size(), limits);
  CHECK(small_moov.feed(0, b.file).error().code == Errc::LimitExceeded);
}

TEST_CASE("ctts version 1 with negative offsets, and version 0 read as signed") {
  for (uint8_t version : {uint8_t{0}, uint8_t{1}}) {
    MovieSpec m;
    TrackSpec v = video_track(4);
    v.ctts_version = version;
    v.ctts = {{1, 0}, {1, 80}, {1, -40}, {1, -40}};
    m.tracks = {v};
    const MediaIndex index = demux_ok(build(m).file);
    REQUIRE(index.samples.size() == 4);
    CHECK(index.samples[0].cts_ms == 0);
    CHECK(index.samples[1].cts_ms == 80);
    CHECK(index.samples[2].cts_ms == -40);
    CHECK(index.samples[3].cts_ms == -40);
    CHECK(index.samples[2].dts_ms == 80);  // decode times are untouched
    // The tag prefix carries the negative SI24 composition time.
    auto p = tag_prefix(index, index.samples[2]);
    REQUIRE(p.ok());
    CHECK(p->span().size() == 5);
    CHECK(Bytes(p->span().begin(), p->span().end()) == Bytes{0x27, 0x01, 0xFF, 0xFF, 0xD8});
  }
}

TEST_CASE("stsc with several runs") {
  MovieSpec m;
  TrackSpec v = video_track(9);
  v.stsc = {{1, 3}, {2, 1}, {4, 2}};  // chunks of 3, 1, 1, 2, 2 samples
  TrackSpec a = audio_track(7);
  a.stsc = {{1, 4}, {2, 3}};
  m.tracks = {v, a};
  const Built b = build(m);
  const MediaIndex index = demux_ok(b.file);
  check_offsets(index, kSampleVideo, b.sample_offsets[0], v.sizes);
  check_offsets(index, kSampleAudio, b.sample_offsets[1], a.sizes);
  // Sample bytes really are there: sample i of the video track is filled with 0x10 + i.
  for (const Sample* s : of_type(index, kSampleVideo)) {
    CHECK(b.file[s->file_offset] == 0x10 + (s->dts_ms / 40));
    CHECK(b.file[s->file_offset + s->size - 1] == 0x10 + (s->dts_ms / 40));
  }
}

TEST_CASE("stsc runs that are not ascending are malformed") {
  MovieSpec m;
  TrackSpec v = video_track(4);
  v.stsc = {{2, 1}, {2, 3}};
  m.tracks = {v};
  CHECK(demux_error(build(m).file).code == Errc::Malformed);
}

TEST_CASE("edit lists: an empty edit delays a track, media_time moves it earlier") {
  SUBCASE("empty edit") {
    MovieSpec m;
    TrackSpec v = video_track(3);
    v.edit = std::make_pair(500u, 0);
    m.tracks = {v, audio_track(3)};
    const MediaIndex index = demux_ok(build(m).file);
    const auto video = of_type(index, kSampleVideo);
    CHECK(video[0]->dts_ms == 500);
    CHECK(video[2]->dts_ms == 580);
    CHECK(of_type(index, kSampleAudio)[0]->dts_ms == 0);
    CHECK(index.samples.front().type == kSampleAudio);
  }
  SUBCASE("B-frame delay: media_time 80 with ctts, the whole movie moves by 80 ms") {
    MovieSpec m;
    TrackSpec v = video_track(3);
    v.ctts = {{3, 80}};
    v.edit = std::make_pair(0u, 80);
    m.tracks = {v, audio_track(3)};
    const MediaIndex index = demux_ok(build(m).file);
    const auto video = of_type(index, kSampleVideo);
    // pts of the first frame is 0 in presentation time; decode starts 80 ms before it. FLV times
    // cannot be negative, so everything moves 80 ms later (as ffmpeg's FLV muxer does).
    CHECK(video[0]->dts_ms == 0);
    CHECK(video[0]->cts_ms == 80);
    CHECK(video[1]->dts_ms == 40);
    CHECK(of_type(index, kSampleAudio)[0]->dts_ms == 80);
  }
  SUBCASE("AAC priming: audio media_time 1024 of 44100") {
    MovieSpec m;
    TrackSpec a = audio_track(4);
    a.edit = std::make_pair(0u, 1024);
    m.tracks = {video_track(2), a};
    const MediaIndex index = demux_ok(build(m).file);
    const auto audio = of_type(index, kSampleAudio);
    // The first audio sample starts 23.2 ms before 0; rounded down that is -24, so the movie
    // moves 24 ms later.
    CHECK(audio[0]->dts_ms == 0);
    CHECK(audio[1]->dts_ms == 24);
    CHECK(of_type(index, kSampleVideo)[0]->dts_ms == 24);
  }
}

TEST_CASE("audio-only and video-only files") {
  SUBCASE("audio only") {
    MovieSpec m;
    m.tracks = {audio_track(10)};
    const MediaIndex index = demux_ok(build(m).file);
    CHECK_FALSE(index.has_video);
    CHECK(index.has_audio);
    CHECK(index.video_sequence_header.empty());
    CHECK(index.keyframes.empty());
    CHECK(index.seek(0) == 0);
    CHECK(index.seek(50) == 2);  // 46 ms is the last sample at or before 50
    CHECK(index.seek(100000) == 9);
  }
  SUBCASE("video only") {
    MovieSpec m;
    m.tracks = {video_track(6)};
    const MediaIndex index = demux_ok(build(m).file);
    CHECK(index.has_video);
    CHECK_FALSE(index.has_audio);
    CHECK(index.audio_sequence_header.empty());
    CHECK(index.seek(100) == 0);
    CHECK(index.seek(120) == 3);
    CHECK(index.seek(100000) == 3);
  }
}

TEST_CASE("no stss means every video sample is a keyframe") {
  MovieSpec m;
  TrackSpec v = video_track(3);
  v.stss.reset();
  m.tracks = {v};
  const MediaIndex index = demux_ok(build(m).file);
  CHECK(index.keyframes.size() == 3);
}

TEST_CASE("multi-track: the first playable video and audio tracks are used") {
  MovieSpec m;
  TrackSpec mpeg4 = video_track(2);
  mpeg4.entry = visual_entry("mp4v", "esds", Bytes(8, 0));  // not sendable: skipped
  TrackSpec first = video_track(3);
  first.fill = 0x30;
  TrackSpec second = video_track(4);
  TrackSpec text;  // a subtitle track with a broken sample table: never parsed
  text.video = true;
  text.sizes = {};
  text.entry = Bytes{0, 0, 0, 1};
  TrackSpec a1 = audio_track(2), a2 = audio_track(5);
  m.tracks = {mpeg4, first, a1, text, second, a2};
  const Built b = build(m);
  const MediaIndex index = demux_ok(b.file);
  check_offsets(index, kSampleVideo, b.sample_offsets[1], first.sizes);
  check_offsets(index, kSampleAudio, b.sample_offsets[2], a1.sizes);
}

TEST_CASE("HEVC and MP3 sample entries") {
  MovieSpec m;
  TrackSpec v = video_track(2);
  const Bytes hvcc(23, 0);
  v.entry = visual_entry("hvc1", "hvcC", hvcc);
  TrackSpec a = audio_track(3);
  a.entry = audio_entry("mp4a", esds(0x6B, {}));
  m.tracks = {v, a};
  const MediaIndex index = demux_ok(build(m).file);
  CHECK(index.video_codec == VideoCodec::Hevc);
  CHECK(index.audio_codec == AudioCodec::Mp3);
  CHECK(index.audio_sequence_header.empty());
  const Bytes hevc_sh = cat({{0x90, 'h', 'v', 'c', '1'}, hvcc});
  CHECK(index.video_sequence_header == hevc_sh);

  auto key = tag_prefix(index, index.samples[0]);
  REQUIRE(key.ok());
  CHECK(Bytes(key->span().begin(), key->span().end()) == Bytes{0x91, 'h', 'v', 'c', '1', 0, 0, 0});
  const Sample* mp3 = of_type(index, kSampleAudio)[0];
  auto audio = tag_prefix(index, *mp3);
  REQUIRE(audio.ok());
  CHECK(Bytes(audio->span().begin(), audio->span().end()) == Bytes{0x2F});  // MP3, 44 kHz, 16-bit, stereo

  // .mp3 sample entries too.
  a.entry = audio_entry(".mp3", {});
  m.tracks = {a};
  CHECK(demux_ok(build(m).file).audio_codec == AudioCodec::Mp3);
}

TEST_CASE("unsupported codecs only: a clear error") {
  MovieSpec m;
  TrackSpec v = video_track(2);
  v.entry = visual_entry("av01", "av1C", Bytes(4, 0));
  m.tracks = {v};
  const auto e = demux_error(build(m).file);
  CHECK(e.code == Errc::Unsupported);
  CHECK(e.message().find("no H.264/HEVC video or AAC/MP3 audio track") != std::string::npos);
}

TEST_CASE("onMetaData built for the movie") {
  MovieSpec m;
  m.tracks = {video_track(), audio_track()};
  const MediaIndex index = demux_ok(build(m).file);
  auto values = sluice::protocol::amf::decode_amf0_all(index.metadata);
  REQUIRE(values.ok());
  REQUIRE(values->size() == 2);
  CHECK((*values)[0].as_string() == "onMetaData");
  const auto& meta = (*values)[1];
  CHECK(meta.get_number("width") == 320);
  CHECK(meta.get_number("height") == 240);
  CHECK(meta.get_number("videocodecid") == 7);
  CHECK(meta.get_number("audiocodecid") == 10);
  CHECK(meta.get_number("audiosamplerate") == 44100);
  CHECK(meta.find("stereo")->as_boolean());
  CHECK(meta.get_number("duration") == doctest::Approx(index.duration_ms / 1000.0));
  CHECK(meta.get_number("filesize") == double(index.file_size));
}

TEST_CASE("a truncated file plays up to where it stops") {
  MovieSpec m;
  m.tracks = {video_track(), audio_track()};
  m.moov_first = true;
  const Built b = build(m);
  // Chunks alternate: v0 a0a1 v1 a2a3 v2 a4a5 v3 a6a7 v4. Cut inside v3: v0-v2 and a0-a5 remain.
  const uint64_t cut = b.sample_offsets[0][3] + 10;
  const Bytes file(b.file.begin(), b.file.begin() + long(cut));
  const MediaIndex index = demux_ok(file);
  CHECK(of_type(index, kSampleVideo).size() == 3);
  CHECK(of_type(index, kSampleAudio).size() == 6);
  for (const auto& s : index.samples) CHECK(s.file_offset + s.size <= file.size());
}

// ---- malformed files ----------------------------------------------------------------------

TEST_CASE("a box whose size exceeds its parent is malformed") {
  MovieSpec m;
  m.tracks = {video_track()};
  Built b = build(m);
  // The moov is last: make its first child (mvhd) claim more than the moov holds.
  const auto pos =
      std::search(b.file.begin(), b.file.end(), std::begin("mvhd"), std::begin("mvhd") + 4) - b.file.begin() - 4;
  b.file[pos] = 0x7F;
  const auto e = demux_error(b.file);
  CHECK(e.code == Errc::Malformed);
  CHECK(e.message().find("exceeds its parent") != std::string::npos);
}

TEST_CASE("a box size smaller than its header is malformed") {
  MovieSpec m;
  m.tracks = {video_track()};
  Built b = build(m);
  const auto pos =
      std::search(b.file.begin(), b.file.end(), std::begin("stts"), std::begin("stts") + 4) - b.file.begin() - 4;
  b.file[pos] = 0, b.file[pos + 1] = 0, b.file[pos + 2] = 0, b.file[pos + 3] = 4;
  CHECK(demux_error(b.file).code == Errc::Malformed);
  // A largesize below 16 too.
  Bytes file = box("ftyp", Bytes(8, 0));
  put32(file, 1);
  file.insert(file.end(), {'m', 'd', 'a', 't'});
  put64(file, 12);
  CHECK(demux_error(file).code == Errc::Malformed);
}

TEST_CASE("top-level boxes: lying sizes, size 0, no moov, too many boxes") {
  SUBCASE("an mdat claiming more than the file") {
    Bytes file = box("ftyp", Bytes(8, 0));
    put32(file, 1000);
    file.insert(file.end(), {'m', 'd', 'a', 't'});
    file.resize(file.size() + 100, 0);
    const auto e = demux_error(file);
    CHECK(e.code == Errc::Malformed);
  }
  SUBCASE("size 0 runs to the end of the file: no moov after it") {
    Bytes file = box("ftyp", Bytes(8, 0));
    put32(file, 0);
    file.insert(file.end(), {'m', 'd', 'a', 't'});
    file.resize(file.size() + 100, 0);
    const auto e = demux_error(file);
    CHECK(e.code == Errc::Malformed);
    CHECK(e.message().find("no moov") != std::string::npos);
  }
  SUBCASE("size 0 moov at the end is fine") {
    MovieSpec m;
    m.tracks = {video_track()};
    Built b = build(m);
    const auto pos =
        std::search(b.file.begin(), b.file.end(), std::begin("moov"), std::begin("moov") + 4) - b.file.begin() - 4;
    std::memset(&b.file[pos], 0, 4);
    CHECK(demux_ok(b.file).samples.size() == 5);
  }
  SUBCASE("thousands of empty boxes") {
    Bytes file;
    for (int i = 0; i < 2000; ++i) append(file, box("free", {}));
    CHECK(demux_error(file).code == Errc::LimitExceeded);
  }
  SUBCASE("not an MP4 at all") {
    const std::string flv = "FLV\x01\x05\0\0\0\x09\0\0\0\0";
    CHECK_FALSE(demux_mp4(Bytes(flv.begin(), flv.end())).ok());
    CHECK_FALSE(demux_mp4(Bytes{}).ok());
  }
}

TEST_CASE("an oversized moov is refused before it is read") {
  Mp4Demuxer demuxer(uint64_t{1} << 32);
  Bytes header;
  put32(header, 1);
  header.insert(header.end(), {'m', 'o', 'o', 'v'});
  put64(header, kMaxMoovBytes + 1);
  const auto r = demuxer.feed(0, header);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == Errc::LimitExceeded);
}

TEST_CASE("fragmented MP4 is refused with a clear message") {
  SUBCASE("mvex in moov") {
    MovieSpec m;
    m.tracks = {video_track()};
    m.extra_moov = box("mvex", full("trex", 0, Bytes(20, 0)));
    const auto e = demux_error(build(m).file);
    CHECK(e.code == Errc::Unsupported);
    CHECK(e.message().find("fragmented MP4 is not supported") != std::string::npos);
  }
  SUBCASE("moof before moov") {
    Bytes file = cat({box("ftyp", Bytes(8, 0)), box("moof", Bytes(16, 0))});
    const auto e = demux_error(file);
    CHECK(e.code == Errc::Unsupported);
    CHECK(e.message().find("fragmented MP4 is not supported") != std::string::npos);
  }
}

TEST_CASE("absurd counts are errors, never giant allocations") {
  auto with_table = [](const char* type, const Bytes& body) {
    // Replace one table of a valid movie by a tiny box that declares a huge count.
    MovieSpec m;
    m.tracks = {video_track()};
    Built b = build(m);
    const auto at = std::search(b.file.begin(), b.file.end(), type, type + 4) - b.file.begin() - 4;
    const uint32_t old_size = uint32_t(b.file[at]) << 24 | b.file[at + 1] << 16 | b.file[at + 2] << 8 | b.file[at + 3];
    const Bytes replacement = full(type, 0, body);
    Bytes file(b.file.begin(), b.file.begin() + at);
    append(file, replacement);
    file.insert(file.end(), b.file.begin() + at + old_size, b.file.end());
    // Fix up the sizes of the enclosing boxes (moov, trak, mdia, minf, stbl) of this moov-last file.
    const int64_t delta = int64_t(replacement.size()) - old_size;
    for (const char* parent : {"moov", "trak", "mdia", "minf", "stbl"}) {
      const auto p = std::search(file.begin(), file.end(), parent, parent + 4) - file.begin() - 4;
      uint32_t size = uint32_t(file[p]) << 24 | file[p + 1] << 16 | file[p + 2] << 8 | file[p + 3];
      size = uint32_t(int64_t(size) + delta);
      file[p] = uint8_t(size >> 24), file[p + 1] = uint8_t(size >> 16), file[p + 2] = uint8_t(size >> 8),
      file[p + 3] = uint8_t(size);
    }
    return file;
  };
  auto declares_too_many = [](const sluice::Error& e) {
    INFO(e.message());
    CHECK(e.code == Errc::Malformed);
    CHECK(e.message().find("declares") != std::string::npos);
  };
  Bytes huge;
  put32(huge, 0);           // variable sizes
  put32(huge, 0x10000000);  // 268M samples in a 12-byte box
  declares_too_many(demux_error(with_table("stsz", huge)));

  Bytes constant;
  put32(constant, 1);  // constant size 1 byte
  put32(constant, 0x7FFFFFFF);
  const auto e = demux_error(with_table("stsz", constant));
  CHECK(e.message().find("more samples than the file holds") != std::string::npos);

  Bytes stts;
  put32(stts, 0x20000000);
  declares_too_many(demux_error(with_table("stts", stts)));
  Bytes stco;
  put32(stco, 0x40000000);
  declares_too_many(demux_error(with_table("stco", stco)));
  Bytes stsc;
  put32(stsc, 0x15555555);
  declares_too_many(demux_error(with_table("stsc", stsc)));
  Bytes stss;
  put32(stss, 0x40000000);
  declares_too_many(demux_error(with_table("stss", stss)));
}

TEST_CASE("more than 50M samples is refused before anything is reserved") {
  // A constant-size stsz with 60M one-byte samples, in a (claimed) 1 TB file.
  MovieSpec m;
  TrackSpec v = video_track(1);
  m.tracks = {v};
  const Built b = build(m);
  const auto moov_at =
      std::search(b.file.begin(), b.file.end(), std::begin("moov"), std::begin("moov") + 4) - b.file.begin();
  Bytes moov(b.file.begin() + moov_at + 4, b.file.end());
  const auto stsz = std::search(moov.begin(), moov.end(), std::begin("stsz"), std::begin("stsz") + 4) - moov.begin();
  // stsz payload: version/flags, sample_size, sample_count.
  moov[stsz + 8 + 3] = 1;
  const uint32_t count = 60'000'000;
  moov[stsz + 12] = uint8_t(count >> 24), moov[stsz + 13] = uint8_t(count >> 16), moov[stsz + 14] = uint8_t(count >> 8),
              moov[stsz + 15] = uint8_t(count);
  auto r = parse_mp4_movie(moov, uint64_t{1} << 40);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == Errc::LimitExceeded);
}

TEST_CASE("nesting deeper than the limit and too many boxes") {
  // Box walker level: 40 nested containers.
  Bytes nested = box("free", {});
  for (int i = 0; i < 40; ++i) nested = box("nest", nested);
  BoxBudget budget;
  BoxWalker top(nested, budget);
  Box b;
  std::optional<BoxWalker> walker = top;
  sluice::Errc last = Errc::Ok;
  for (int depth = 0; depth < 50; ++depth) {
    auto more = walker->next(b);
    REQUIRE(more.ok());
    if (!*more) break;
    auto child = walker->children(b);
    if (!child) {
      last = child.error().code;
      break;
    }
    walker = *child;
  }
  CHECK(last == Errc::LimitExceeded);

  // A moov of 100 001 empty boxes exhausts the box budget.
  Bytes moov_payload;
  for (uint32_t i = 0; i <= kMaxBoxes; ++i) append(moov_payload, box("free", {}));
  auto r = parse_mp4_movie(moov_payload, moov_payload.size());
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == Errc::LimitExceeded);
}

TEST_CASE("box headers") {
  Bytes b;
  put32(b, 0);
  b.insert(b.end(), {'m', 'd', 'a', 't'});
  auto h = parse_box_header(b, 1000);
  REQUIRE(h.ok());
  CHECK(h->size == 1000);
  CHECK(h->header_size == 8);
  CHECK(box_type_name(h->type) == "mdat");
  CHECK(box_type_name(0x01020304) == "0x01020304");
  CHECK(parse_box_header(Bytes{0, 0, 0}, 10).error().code == Errc::Truncated);
  Bytes large;
  put32(large, 1);
  large.insert(large.end(), {'m', 'd', 'a', 't'});
  CHECK(parse_box_header(large, 100).error().code == Errc::Truncated);
  put64(large, uint64_t{1} << 33);
  auto big = parse_box_header(large, uint64_t{1} << 34);
  REQUIRE(big.ok());
  CHECK(big->size == uint64_t{1} << 33);
  CHECK(big->header_size == 16);
  CHECK(parse_box_header(large, 1000).error().code == Errc::Malformed);
}
