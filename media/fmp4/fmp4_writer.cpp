#include "media/fmp4/fmp4_writer.hpp"

#include <algorithm>
#include <cassert>
#include <string_view>

#include "base/byte_io.hpp"
#include "media/mp4/box_reader.hpp"
#include "media/mp4/box_writer.hpp"

namespace sluice::media::fmp4 {

using mp4::box_type;
using mp4::BoxScope;
using mp4::BoxWriter;

namespace {

constexpr uint16_t kLanguageUnd = 0x55C4;     // ISO 639-2 "und", 5 bits per letter
constexpr uint8_t kEsdsAac = 0x40;            // objectTypeIndication: ISO 14496-3 audio
constexpr uint32_t kMaxPictureSide = 0xFFFF;  // the sample entry's width/height are 16 bits

// Track Fragment Header Box flags.
constexpr uint32_t kTfhdDefaultSampleFlags = 0x000020;
constexpr uint32_t kTfhdDefaultBaseIsMoof = 0x020000;
// Track Fragment Run Box flags.
constexpr uint32_t kTrunDataOffset = 0x000001;
constexpr uint32_t kTrunDuration = 0x000100;
constexpr uint32_t kTrunSize = 0x000200;
constexpr uint32_t kTrunFlags = 0x000400;
constexpr uint32_t kTrunCompositionOffset = 0x000800;
constexpr uint32_t kVideoTrun = kTrunDataOffset | kTrunDuration | kTrunSize | kTrunFlags | kTrunCompositionOffset;
constexpr uint32_t kAudioTrun = kTrunDataOffset | kTrunDuration | kTrunSize;

// Box sizes of a fragment, so the whole fragment is sized (and bounded) before it is written.
constexpr uint64_t kHeader = 8, kFullHeader = 12;
constexpr uint64_t kMfhdSize = kFullHeader + 4;
constexpr uint64_t kTfdtSize = kFullHeader + 8;           // version 1
constexpr uint64_t kTrunFixedSize = kFullHeader + 4 + 4;  // sample_count, data_offset
constexpr uint64_t kVideoTrunEntry = 16, kAudioTrunEntry = 8;
constexpr uint64_t kVideoTfhdSize = kFullHeader + 4;
constexpr uint64_t kAudioTfhdSize = kFullHeader + 4 + 4;  // + default_sample_flags

bool video_codec(hls::Codec c) { return c == hls::Codec::Avc || c == hls::Codec::Hevc; }

void write_fragmented_ftyp(BoxWriter& b) {
  BoxScope ftyp(b, box_type("ftyp"));
  ByteWriter& w = b.w();
  w.u32be(box_type("iso6"));
  w.u32be(0);  // minor version
  for (const char* brand : {"iso6", "mp41"}) w.string(std::string_view(brand, 4));
}

// mp4::write_mdhd has the millisecond timescale of a recording; here it is the 90 kHz clock.
void write_mdhd_90k(BoxWriter& b) {
  BoxScope mdhd(b, box_type("mdhd"), 0, 0);
  ByteWriter& w = b.w();
  w.u32be(0);  // creation time
  w.u32be(0);  // modification time
  w.u32be(hls::kClock);
  w.u32be(0);  // duration: all in the fragments
  w.u16be(kLanguageUnd);
  w.u16be(0);
}

// The sample entry, then empty tables: the samples are all in the fragments.
void write_stbl(BoxWriter& b, uint32_t track_id, const hls::TrackSetup& t) {
  BoxScope stbl(b, box_type("stbl"));
  {
    BoxScope stsd(b, box_type("stsd"), 0, 0);
    b.w().u32be(1);  // entry_count
    if (t.codec == hls::Codec::Aac) {
      mp4::AudioEntry e;
      e.object_type = kEsdsAac;
      e.specific = t.config;
      e.sample_rate = t.sample_rate;  // written as 0 past 65535 Hz: the ASC has the rate
      e.channels = t.channels;
      e.track_id = track_id;
      mp4::write_mp4a_entry(b, e);
    } else {
      const bool hevc = t.codec == hls::Codec::Hevc;
      // hvc1, not hev1: Apple players take only hvc1 (parameter sets in the hvcC).
      mp4::write_visual_entry(b, hevc ? box_type("hvc1") : box_type("avc1"), hevc ? box_type("hvcC") : box_type("avcC"),
                              t.config, std::min(t.width, kMaxPictureSide), std::min(t.height, kMaxPictureSide));
    }
  }
  // stts, stsc, stsz, stco in the usual order; stsz has sample_size before its sample_count.
  for (uint32_t table : {box_type("stts"), box_type("stsc"), box_type("stsz"), box_type("stco")}) {
    BoxScope box(b, table, 0, 0);
    if (table == box_type("stsz")) b.w().u32be(0);  // sample_size 0: sizes per sample
    b.w().u32be(0);                                 // entry_count / sample_count
  }
}

void write_trak(BoxWriter& b, uint32_t track_id, const hls::TrackSetup& t) {
  const bool audio = t.codec == hls::Codec::Aac;
  BoxScope trak(b, box_type("trak"));
  mp4::write_tkhd(b, track_id, 0, audio, audio ? 0 : std::min(t.width, kMaxPictureSide),
                  audio ? 0 : std::min(t.height, kMaxPictureSide));
  BoxScope mdia(b, box_type("mdia"));
  write_mdhd_90k(b);
  mp4::write_hdlr(b, audio);
  BoxScope minf(b, box_type("minf"));
  mp4::write_media_header_and_dinf(b, audio);
  write_stbl(b, track_id, t);
}

void write_trex(BoxWriter& b, uint32_t track_id) {
  BoxScope trex(b, box_type("trex"), 0, 0);
  ByteWriter& w = b.w();
  w.u32be(track_id);
  w.u32be(1);  // default_sample_description_index
  w.u32be(0);  // default_sample_duration, _size, _flags: every fragment gives its own
  w.u32be(0);
  w.u32be(0);
}

// One track's share of a fragment.
struct Run {
  uint32_t track_id = 0;
  std::span<const hls::Sample> samples;
  bool video = false;
  uint64_t data_offset = 0;  // from the moof's first byte

  uint64_t traf_size() const {
    const uint64_t entry = video ? kVideoTrunEntry : kAudioTrunEntry;
    return kHeader + (video ? kVideoTfhdSize : kAudioTfhdSize) + kTfdtSize + kTrunFixedSize + entry * samples.size();
  }
};

// The sum of the sample sizes, or a value past `limit` as soon as it is exceeded (no overflow).
uint64_t payload_size(std::span<const hls::Sample> samples, uint64_t limit) {
  uint64_t total = 0;
  for (const hls::Sample& s : samples) {
    total += s.data.size();
    if (total > limit) return limit + 1;
  }
  return total;
}

void write_traf(BoxWriter& b, const Run& r) {
  BoxScope traf(b, box_type("traf"));
  ByteWriter& w = b.w();
  {
    BoxScope tfhd(b, box_type("tfhd"), 0, kTfhdDefaultBaseIsMoof | (r.video ? 0 : kTfhdDefaultSampleFlags));
    w.u32be(r.track_id);
    if (!r.video) w.u32be(kFlagsSync);  // every AAC frame decodes on its own
  }
  {
    BoxScope tfdt(b, box_type("tfdt"), 1, 0);
    w.u64be(r.samples.front().dts);
  }
  // Version 1: signed composition offsets, so a stream with negative ones needs no edit list.
  BoxScope trun(b, box_type("trun"), r.video ? 1 : 0, r.video ? kVideoTrun : kAudioTrun);
  w.u32be(static_cast<uint32_t>(r.samples.size()));  // bounded by kMaxFragmentBytes
  w.u32be(static_cast<uint32_t>(r.data_offset));     // likewise < 2^31: a valid int32
  for (const hls::Sample& s : r.samples) {
    w.u32be(s.duration);
    w.u32be(static_cast<uint32_t>(s.data.size()));
    if (r.video) {
      w.u32be(s.keyframe ? kFlagsSync : kFlagsNonSync);
      w.u32be(static_cast<uint32_t>(s.cts));  // two's complement
    }
  }
}

}  // namespace

std::vector<uint8_t> init_segment(const hls::StreamSetup& setup) {
  const bool has_video = setup.video.present(), has_audio = setup.audio.present();
  if (!has_video && !has_audio) return {};
  if (has_video && !video_codec(setup.video.codec)) return {};
  if (has_audio && setup.audio.codec != hls::Codec::Aac) return {};
  if (setup.video.config.size() > kMaxConfigBytes || setup.audio.config.size() > kMaxConfigBytes) return {};

  std::vector<uint8_t> out;
  BoxWriter b(out);
  write_fragmented_ftyp(b);
  {  // the scopes close (patch their sizes) before `out` is returned
    BoxScope moov(b, box_type("moov"));
    // The millisecond movie timescale of mp4::write_mvhd is harmless: the movie duration is 0.
    mp4::write_mvhd(b, 0, kAudioTrackId + 1);
    if (has_video) write_trak(b, kVideoTrackId, setup.video);
    if (has_audio) write_trak(b, kAudioTrackId, setup.audio);
    BoxScope mvex(b, box_type("mvex"));
    if (has_video) write_trex(b, kVideoTrackId);
    if (has_audio) write_trex(b, kAudioTrackId);
  }
  return out;
}

std::vector<uint8_t> fragment(uint32_t sequence, std::span<const hls::Sample> video,
                              std::span<const hls::Sample> audio) {
  if (video.empty() && audio.empty()) return {};
  Run runs[2] = {{kVideoTrackId, video, true, 0}, {kAudioTrackId, audio, false, 0}};
  // The sample counts are bounded by the memory holding the spans, so these sums cannot
  // overflow 64 bits; the payload sums stop at the limit.
  uint64_t moof_size = kHeader + kMfhdSize;
  for (const Run& r : runs) {
    if (!r.samples.empty()) moof_size += r.traf_size();
  }
  if (moof_size > kMaxFragmentBytes) return {};
  const uint64_t video_bytes = payload_size(video, kMaxFragmentBytes);
  const uint64_t audio_bytes = payload_size(audio, kMaxFragmentBytes);
  const uint64_t total = moof_size + kHeader + video_bytes + audio_bytes;
  if (total > kMaxFragmentBytes) return {};
  runs[0].data_offset = moof_size + kHeader;
  runs[1].data_offset = moof_size + kHeader + video_bytes;

  std::vector<uint8_t> out;
  out.reserve(total);
  BoxWriter b(out);
  {
    BoxScope moof(b, box_type("moof"));
    {
      BoxScope mfhd(b, box_type("mfhd"), 0, 0);
      b.w().u32be(sequence);
    }
    for (const Run& r : runs) {
      if (!r.samples.empty()) write_traf(b, r);
    }
  }
  assert(out.size() == moof_size);
  mp4::write_mdat_header(out, video_bytes + audio_bytes);  // 8 bytes: total < 4 GiB
  for (const auto samples : {video, audio}) {
    for (const hls::Sample& s : samples) out.insert(out.end(), s.data.begin(), s.data.end());
  }
  assert(out.size() == total);
  return out;
}

}  // namespace sluice::media::fmp4
