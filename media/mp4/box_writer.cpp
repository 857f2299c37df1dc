#include "media/mp4/box_writer.hpp"

#include <algorithm>
#include <cassert>
#include <limits>
#include <string_view>

#include "media/mp4/box_reader.hpp"

namespace sluice::media::mp4 {

namespace {

constexpr uint32_t kFixedOne = 0x00010000;  // 1.0 in 16.16
constexpr uint16_t kVolumeFull = 0x0100;    // 1.0 in 8.8
constexpr uint16_t kLanguageUnd = 0x55C4;   // ISO 639-2 "und", 5 bits per letter
constexpr uint32_t kMatrix[9] = {kFixedOne, 0, 0, 0, kFixedOne, 0, 0, 0, 0x40000000};
constexpr uint32_t kTrackEnabledInMovie = 0x000003;
constexpr uint32_t kSelfContained = 0x000001;

// ISO 14496-1 descriptor tags.
constexpr uint8_t kEsDescriptorTag = 0x03;
constexpr uint8_t kDecoderConfigTag = 0x04;
constexpr uint8_t kDecoderSpecificInfoTag = 0x05;
constexpr uint8_t kSlConfigTag = 0x06;
constexpr uint8_t kAudioStream = 0x05 << 2 | 1;  // streamType audio, upStream 0, reserved 1
constexpr uint8_t kSlPredefinedMp4 = 0x02;

bool fits32(uint64_t v) { return v <= std::numeric_limits<uint32_t>::max(); }

void matrix(ByteWriter& w) {
  for (uint32_t v : kMatrix) w.u32be(v);
}

// A time field of a version 0 (32-bit) or version 1 (64-bit) box.
void time_field(ByteWriter& w, uint8_t version, uint64_t v) {
  if (version == 1) {
    w.u64be(v);
  } else {
    w.u32be(static_cast<uint32_t>(v));
  }
}

// ISO 14496-1 8.3.3: tag, expandable size (7 bits a byte, high bit = more), body.
void descriptor(ByteWriter& w, uint8_t tag, std::span<const uint8_t> body) {
  w.u8(tag);
  const size_t n = body.size();
  assert(n < (size_t{1} << 28));
  for (int shift = 21; shift > 0; shift -= 7) {
    if (n >> shift) w.u8(static_cast<uint8_t>(0x80 | ((n >> shift) & 0x7F)));
  }
  w.u8(static_cast<uint8_t>(n & 0x7F));
  w.bytes(body);
}

}  // namespace

size_t BoxWriter::begin(uint32_t type) {
  const size_t start = out_.size();
  w_.u32be(0);
  w_.u32be(type);
  return start;
}

size_t BoxWriter::begin_full(uint32_t type, uint8_t version, uint32_t flags) {
  const size_t start = begin(type);
  w_.u8(version);
  w_.u24be(flags);
  return start;
}

void BoxWriter::end(size_t start) {
  const size_t size = out_.size() - start;
  assert(fits32(size));  // rule 2
  store_u32be(out_.data() + start, static_cast<uint32_t>(size));
}

void write_ftyp(BoxWriter& b) {
  BoxScope ftyp(b, box_type("ftyp"));
  ByteWriter& w = b.w();
  w.u32be(box_type("isom"));
  w.u32be(0x200);  // minor version, as ffmpeg writes it
  for (const char* brand : {"isom", "iso2", "avc1", "mp41"}) w.string(std::string_view(brand, 4));
}

void write_mvhd(BoxWriter& b, uint64_t duration, uint32_t next_track_id) {
  const uint8_t version = fits32(duration) ? 0 : 1;
  BoxScope mvhd(b, box_type("mvhd"), version, 0);
  ByteWriter& w = b.w();
  time_field(w, version, 0);  // creation time (rule 1)
  time_field(w, version, 0);  // modification time
  w.u32be(kMp4Timescale);
  time_field(w, version, duration);
  w.u32be(kFixedOne);  // rate
  w.u16be(kVolumeFull);
  w.u16be(0);
  w.u64be(0);  // reserved
  matrix(w);
  for (int i = 0; i < 6; ++i) w.u32be(0);  // pre_defined
  w.u32be(next_track_id);
}

void write_tkhd(BoxWriter& b, uint32_t track_id, uint64_t duration, bool audio, uint32_t width, uint32_t height) {
  const uint8_t version = fits32(duration) ? 0 : 1;
  BoxScope tkhd(b, box_type("tkhd"), version, kTrackEnabledInMovie);
  ByteWriter& w = b.w();
  time_field(w, version, 0);
  time_field(w, version, 0);
  w.u32be(track_id);
  w.u32be(0);  // reserved
  time_field(w, version, duration);
  w.u64be(0);  // reserved
  w.u16be(0);  // layer
  w.u16be(0);  // alternate group
  w.u16be(audio ? kVolumeFull : 0);
  w.u16be(0);
  matrix(w);
  // 16.16 fixed point; sizes past 65535 pixels are no real picture.
  w.u32be((width & 0xFFFF) << 16);
  w.u32be((height & 0xFFFF) << 16);
}

void write_edts(BoxWriter& b, uint64_t delay, uint64_t media_duration) {
  BoxScope edts(b, box_type("edts"));
  const uint8_t version = fits32(delay) && fits32(media_duration) ? 0 : 1;
  BoxScope elst(b, box_type("elst"), version, 0);
  ByteWriter& w = b.w();
  w.u32be(2);
  time_field(w, version, delay);
  time_field(w, version, version == 1 ? ~uint64_t{0} : uint64_t{0xFFFFFFFF});  // media_time -1: empty
  w.u32be(kFixedOne);
  time_field(w, version, media_duration);
  time_field(w, version, 0);
  w.u32be(kFixedOne);
}

void write_mdhd(BoxWriter& b, uint64_t duration) {
  const uint8_t version = fits32(duration) ? 0 : 1;
  BoxScope mdhd(b, box_type("mdhd"), version, 0);
  ByteWriter& w = b.w();
  time_field(w, version, 0);
  time_field(w, version, 0);
  w.u32be(kMp4Timescale);
  time_field(w, version, duration);
  w.u16be(kLanguageUnd);
  w.u16be(0);
}

void write_hdlr(BoxWriter& b, bool audio) {
  BoxScope hdlr(b, box_type("hdlr"), 0, 0);
  ByteWriter& w = b.w();
  w.u32be(0);  // pre_defined
  w.u32be(audio ? box_type("soun") : box_type("vide"));
  for (int i = 0; i < 3; ++i) w.u32be(0);
  const std::string_view name = audio ? "SoundHandler" : "VideoHandler";
  w.string(name);
  w.u8(0);
}

void write_media_header_and_dinf(BoxWriter& b, bool audio) {
  if (audio) {
    BoxScope smhd(b, box_type("smhd"), 0, 0);
    b.w().u16be(0);  // balance
    b.w().u16be(0);
  } else {
    BoxScope vmhd(b, box_type("vmhd"), 0, 1);  // flags 1, as the spec requires
    b.w().u16be(0);                            // graphicsmode: copy
    for (int i = 0; i < 3; ++i) b.w().u16be(0);
  }
  BoxScope dinf(b, box_type("dinf"));
  BoxScope dref(b, box_type("dref"), 0, 0);
  b.w().u32be(1);
  BoxScope url(b, box_type("url "), 0, kSelfContained);
}

void write_visual_entry(BoxWriter& b, uint32_t entry_type, uint32_t config_type, std::span<const uint8_t> record,
                        uint32_t width, uint32_t height) {
  BoxScope entry(b, entry_type);
  ByteWriter& w = b.w();
  for (int i = 0; i < 6; ++i) w.u8(0);
  w.u16be(1);                              // data_reference_index
  for (int i = 0; i < 4; ++i) w.u32be(0);  // pre_defined, reserved
  w.u16be(static_cast<uint16_t>(width & 0xFFFF));
  w.u16be(static_cast<uint16_t>(height & 0xFFFF));
  w.u32be(0x00480000);  // 72 dpi
  w.u32be(0x00480000);
  w.u32be(0);
  w.u16be(1);                            // frame_count
  for (int i = 0; i < 32; ++i) w.u8(0);  // compressorname
  w.u16be(0x0018);                       // depth
  w.u16be(0xFFFF);                       // pre_defined -1
  BoxScope config(b, config_type);
  w.bytes(record);
}

void write_mp4a_entry(BoxWriter& b, const AudioEntry& e) {
  BoxScope entry(b, box_type("mp4a"));
  ByteWriter& w = b.w();
  for (int i = 0; i < 6; ++i) w.u8(0);
  w.u16be(1);  // data_reference_index
  w.u64be(0);  // version, revision, vendor
  w.u16be(e.channels ? e.channels : 2);
  w.u16be(16);  // sample size
  w.u32be(0);   // compression id, packet size
  // 16.16; a rate past 65535 Hz does not fit (decoders take it from the AudioSpecificConfig).
  w.u32be(e.sample_rate <= 0xFFFF ? e.sample_rate << 16 : 0);

  std::vector<uint8_t> config;
  ByteWriter c(config);
  c.u8(e.object_type);
  c.u8(kAudioStream);
  c.u24be(std::min<uint32_t>(e.buffer_size, 0xFFFFFF));
  c.u32be(e.max_bitrate);
  c.u32be(e.avg_bitrate);
  if (!e.specific.empty()) descriptor(c, kDecoderSpecificInfoTag, e.specific);

  std::vector<uint8_t> es;
  ByteWriter s(es);
  s.u16be(static_cast<uint16_t>(e.track_id));  // ES_ID
  s.u8(0);                                     // no dependsOn, URL or OCR stream
  descriptor(s, kDecoderConfigTag, config);
  const uint8_t sl = kSlPredefinedMp4;
  descriptor(s, kSlConfigTag, std::span(&sl, 1));

  BoxScope esds(b, box_type("esds"), 0, 0);
  descriptor(w, kEsDescriptorTag, es);
}

void write_mdat_header(std::vector<uint8_t>& out, uint64_t payload) {
  ByteWriter w(out);
  if (payload <= std::numeric_limits<uint32_t>::max() - kBoxHeaderSize) {
    w.u32be(static_cast<uint32_t>(payload + kBoxHeaderSize));
    w.u32be(box_type("mdat"));
    return;
  }
  w.u32be(1);  // a largesize follows
  w.u32be(box_type("mdat"));
  w.u64be(payload + kLargeBoxHeaderSize);
}

}  // namespace sluice::media::mp4
