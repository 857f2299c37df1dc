#include "media/mp4/mp4_sample_entry.hpp"

#include <algorithm>

#include "media/codec/aac.hpp"
#include "media/codec/avc.hpp"
#include "media/codec/hevc.hpp"
#include "base/byte_io.hpp"

namespace sluice::media::mp4 {

namespace {

// ISO 14496-12 VisualSampleEntry: 8 bytes of SampleEntry, 16 reserved, width, height, then 50
// bytes of resolution, frame count, compressor name and depth; child boxes follow.
constexpr size_t kVisualEntryWidthAt = 24;
constexpr size_t kVisualEntrySize = 78;
// AudioSampleEntry: SampleEntry, a version (QuickTime), channelcount at 16, samplerate (16.16)
// at 24; 28 bytes. QuickTime sound description version 1 adds 16 bytes, version 2 adds 36 and
// moves the real rate (f64) and channel count after the first 28.
constexpr size_t kAudioEntryVersionAt = 8;
constexpr size_t kAudioEntryChannelsAt = 16;
constexpr size_t kAudioEntryRateAt = 24;
constexpr size_t kAudioEntrySize = 28;
constexpr size_t kAudioEntryV1Extra = 16;
constexpr size_t kAudioEntryV2Extra = 36;

// ISO 14496-1 descriptor tags and MPEG-4 objectTypeIndication values.
constexpr uint8_t kEsDescriptorTag = 0x03;
constexpr uint8_t kDecoderConfigTag = 0x04;
constexpr uint8_t kDecoderSpecificInfoTag = 0x05;
constexpr size_t kDecoderConfigFixed = 13;
constexpr uint8_t kObjectAacMpeg4 = 0x40;
constexpr uint8_t kObjectAacMpeg2Main = 0x66;
constexpr uint8_t kObjectAacMpeg2Ssr = 0x68;
constexpr uint8_t kObjectMp3Mpeg2 = 0x69;
constexpr uint8_t kObjectMp3Mpeg1 = 0x6B;

Result<std::optional<CodecSetup>> parse_visual(const Box& entry, const BoxWalker& parent) {
  if (entry.payload.size() < kVisualEntrySize) return Error(Errc::Truncated, "visual sample entry");
  CodecSetup c;
  c.width = load_u32be(entry.payload.data() + kVisualEntryWidthAt) >> 16;
  c.height = load_u32be(entry.payload.data() + kVisualEntryWidthAt) & 0xFFFF;
  const bool avc = entry.type == box_type("avc1") || entry.type == box_type("avc3");
  const bool hevc = entry.type == box_type("hvc1") || entry.type == box_type("hev1");
  if (!avc && !hevc) return std::optional<CodecSetup>{};
  auto config = find_child(parent, entry, avc ? box_type("avcC") : box_type("hvcC"), kVisualEntrySize);
  if (!config) return std::move(config).error();
  if (!*config) return std::optional<CodecSetup>{};  // nothing to build a sequence header from
  c.video_codec = avc ? VideoCodec::Avc : VideoCodec::Hevc;
  c.config = (*config)->box.payload;
  // The SPS knows the coded size; the sample entry's is only a display hint.
  uint32_t w = 0, h = 0;
  if (avc) {
    if (auto cfg = parse_avc_config(c.config)) w = cfg->width, h = cfg->height;
  } else if (auto cfg = parse_hevc_config(c.config)) {
    w = cfg->width, h = cfg->height;
  }
  if (w && h) c.width = w, c.height = h;
  return std::optional<CodecSetup>{c};
}

// ISO 14496-1 8.3.3 expandable size: up to four bytes of 7 bits, high bit = more follows.
bool read_descriptor(ByteReader& r, uint8_t& tag, ByteReader& body) {
  tag = r.u8();
  uint32_t size = 0;
  for (int i = 0; i < 4; ++i) {
    const uint8_t b = r.u8();
    size = size << 7 | (b & 0x7F);
    if (!(b & 0x80)) break;
  }
  if (r.failed() || size > r.remaining()) return false;
  body = ByteReader(r.bytes(size));
  return true;
}

struct EsdsInfo {
  uint8_t object_type = 0;
  std::span<const uint8_t> specific_info;
};

// esds: ES_Descriptor { ES_ID, flags, [dependsOn, URL, OCR], DecoderConfigDescriptor {
// objectTypeIndication, ..., DecoderSpecificInfo } }.
std::optional<EsdsInfo> parse_esds(std::span<const uint8_t> esds_body) {
  ByteReader r(esds_body);
  uint8_t tag = 0;
  ByteReader es(std::span<const uint8_t>{});
  if (!read_descriptor(r, tag, es) || tag != kEsDescriptorTag) return std::nullopt;
  es.skip(2);  // ES_ID
  const uint8_t flags = es.u8();
  if (flags & 0x80) es.skip(2);        // dependsOn_ES_ID
  if (flags & 0x40) es.skip(es.u8());  // URL
  if (flags & 0x20) es.skip(2);        // OCR_ES_Id
  ByteReader dc(std::span<const uint8_t>{});
  if (es.failed() || !read_descriptor(es, tag, dc) || tag != kDecoderConfigTag) return std::nullopt;
  EsdsInfo info;
  info.object_type = dc.u8();
  if (!dc.skip(kDecoderConfigFixed - 1)) return std::nullopt;
  ByteReader dsi(std::span<const uint8_t>{});
  if (read_descriptor(dc, tag, dsi) && tag == kDecoderSpecificInfoTag) info.specific_info = dsi.rest();
  return info;
}

// The esds of an mp4a entry: a direct child, or inside QuickTime's 'wave' atom.
Result<std::optional<Box>> find_esds(const Box& entry, const BoxWalker& parent, size_t skip) {
  auto esds = find_child(parent, entry, box_type("esds"), skip);
  if (!esds) return std::move(esds).error();
  if (*esds) return std::optional<Box>{(*esds)->box};
  auto wave = find_child(parent, entry, box_type("wave"), skip);
  if (!wave) return std::move(wave).error();
  if (!*wave) return std::optional<Box>{};
  auto inner = find_child((*wave)->level, (*wave)->box, box_type("esds"));
  if (!inner) return std::move(inner).error();
  return *inner ? std::optional<Box>{(*inner)->box} : std::optional<Box>{};
}

Result<void> apply_esds(const Box& esds, CodecSetup& c) {
  auto full = full_box(esds);
  if (!full) return std::move(full).error();
  auto info = parse_esds(full->body);
  if (!info) return ok();
  if (info->object_type == kObjectMp3Mpeg1 || info->object_type == kObjectMp3Mpeg2) {
    c.audio_codec = AudioCodec::Mp3;
    return ok();
  }
  const bool aac = info->object_type == kObjectAacMpeg4 ||
                   (info->object_type >= kObjectAacMpeg2Main && info->object_type <= kObjectAacMpeg2Ssr);
  if (!aac) return ok();
  auto asc = parse_aac_config(info->specific_info);
  if (!asc) return ok();  // a player cannot decode AAC without a valid config
  c.audio_codec = AudioCodec::Aac;
  c.config = info->specific_info;
  if (asc->sample_rate) c.sample_rate = asc->sample_rate;
  if (asc->channels) c.channels = asc->channels;
  return ok();
}

Result<std::optional<CodecSetup>> parse_audio(const Box& entry, const BoxWalker& parent) {
  const auto p = entry.payload;
  if (p.size() < kAudioEntrySize) return Error(Errc::Truncated, "audio sample entry");
  CodecSetup c;
  const uint16_t version = static_cast<uint16_t>(p[kAudioEntryVersionAt] << 8 | p[kAudioEntryVersionAt + 1]);
  c.channels = static_cast<uint8_t>(p[kAudioEntryChannelsAt + 1]);
  c.sample_rate = load_u32be(p.data() + kAudioEntryRateAt) >> 16;
  size_t fixed = kAudioEntrySize;
  if (version == 1) fixed += kAudioEntryV1Extra;
  if (version == 2) {
    fixed += kAudioEntryV2Extra;
    if (p.size() < fixed) return Error(Errc::Truncated, "QuickTime v2 sound description");
    ByteReader r(p.subspan(kAudioEntrySize + 4));
    const double rate = r.f64be();
    c.sample_rate = rate > 0 && rate < 1e6 ? static_cast<uint32_t>(rate) : 0;
    c.channels = static_cast<uint8_t>(std::min<uint32_t>(r.u32be(), 255));
  }
  if (p.size() < fixed) return Error(Errc::Truncated, "audio sample entry");
  if (entry.type == box_type(".mp3")) {
    c.audio_codec = AudioCodec::Mp3;
    return std::optional<CodecSetup>{c};
  }
  if (entry.type != box_type("mp4a")) return std::optional<CodecSetup>{};
  auto esds = find_esds(entry, parent, fixed);
  if (!esds) return std::move(esds).error();
  if (!*esds) return std::optional<CodecSetup>{};
  auto applied = apply_esds(**esds, c);
  if (!applied) return std::move(applied).error();
  if (c.audio_codec == AudioCodec::Unknown) return std::optional<CodecSetup>{};
  return std::optional<CodecSetup>{c};
}

}  // namespace

Result<std::optional<CodecSetup>> parse_sample_description(const Box& stsd, const BoxWalker& walker, uint32_t handler) {
  // stsd: full box header, u32 entry_count, then the entries as boxes. Only the first is used:
  // files that switch sample descriptions mid-track are not supported.
  auto entries = walker.children(stsd, kFullBoxHeaderSize + 4);
  if (!entries) return std::move(entries).error();
  Box entry;
  auto found = entries->next(entry);
  if (!found) return std::move(found).error();
  if (!*found) return std::optional<CodecSetup>{};
  if (handler == kHandlerVideo) return parse_visual(entry, *entries);
  if (handler == kHandlerAudio) return parse_audio(entry, *entries);
  return std::optional<CodecSetup>{};
}

}  // namespace sluice::media::mp4
