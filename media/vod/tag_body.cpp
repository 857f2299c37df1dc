#include "media/vod/tag_body.hpp"

#include "media/codec/fourcc.hpp"
#include "base/byte_io.hpp"

namespace sluice::media::vod {

namespace {

constexpr uint8_t kFrameKey = 1;
constexpr uint8_t kFrameInter = 2;
constexpr uint8_t kAvcNalu = 1;            // AVCPacketType: NAL units
constexpr uint8_t kExHeaderBit = 0x80;     // Enhanced RTMP video header
constexpr uint8_t kPacketCodedFrames = 1;  // Enhanced RTMP: SI24 CTS + NAL units
constexpr uint8_t kAacHeader = 0xAF;       // AAC, 44 kHz, 16-bit, stereo (fixed by the spec)
constexpr uint8_t kAacRaw = 1;
constexpr uint8_t kSoundFormatMp3 = 2;
constexpr uint8_t kSoundFormatMp3_8k = 14;
constexpr int32_t kSi24Min = -(1 << 23);
constexpr int32_t kSi24Max = (1 << 23) - 1;

class PrefixWriter {
 public:
  explicit PrefixWriter(TagPrefix& p) : p_(p) {}
  void u8(uint8_t v) { p_.bytes[p_.size++] = v; }
  void u24(uint32_t v) {
    store_u24be(p_.bytes.data() + p_.size, v);
    p_.size += 3;
  }
  void u32(uint32_t v) {
    store_u32be(p_.bytes.data() + p_.size, v);
    p_.size += 4;
  }

 private:
  TagPrefix& p_;
};

Result<void> video_prefix(const MediaIndex& index, const Sample& s, TagPrefix& out) {
  if (s.cts_ms < kSi24Min || s.cts_ms > kSi24Max) return Error(Errc::Malformed, "composition time outside SI24");
  const uint8_t frame = s.keyframe ? kFrameKey : kFrameInter;
  const uint32_t cts = static_cast<uint32_t>(s.cts_ms) & 0xFFFFFF;
  PrefixWriter w(out);
  switch (index.video_codec) {
    case VideoCodec::Avc:
      w.u8(static_cast<uint8_t>(frame << 4 | kLegacyVideoCodecAvc));
      w.u8(kAvcNalu);
      w.u24(cts);
      return ok();
    case VideoCodec::Hevc:
      // Enhanced RTMP: legacy players never knew HEVC, so use the standard FourCC form.
      w.u8(static_cast<uint8_t>(kExHeaderBit | frame << 4 | kPacketCodedFrames));
      w.u32(fourcc::kHvc1);
      w.u24(cts);
      return ok();
    default: return Error(Errc::Malformed, "video sample in an index without a supported video codec");
  }
}

// Legacy SoundRate bits: 0 = 5.5 kHz, 1 = 11 kHz, 2 = 22 kHz, 3 = 44 kHz. MP3 decoders read the
// real rate from the frame header; these bits only need to be plausible.
uint8_t sound_rate_bits(uint32_t rate) {
  if (rate < 11025) return 0;
  if (rate < 22050) return 1;
  if (rate < 44100) return 2;
  return 3;
}

Result<void> audio_prefix(const MediaIndex& index, TagPrefix& out) {
  PrefixWriter w(out);
  switch (index.audio_codec) {
    case AudioCodec::Aac:
      w.u8(kAacHeader);
      w.u8(kAacRaw);
      return ok();
    case AudioCodec::Mp3: {
      const uint8_t format = index.audio_sample_rate == 8000 ? kSoundFormatMp3_8k : kSoundFormatMp3;
      const uint8_t stereo = index.audio_channels > 1 ? 1 : 0;
      // SoundSize 1 = 16-bit: compressed formats always decode to 16-bit samples.
      w.u8(static_cast<uint8_t>(format << 4 | sound_rate_bits(index.audio_sample_rate) << 2 | 1 << 1 | stereo));
      return ok();
    }
    default: return Error(Errc::Malformed, "audio sample in an index without a supported audio codec");
  }
}

}  // namespace

Result<TagPrefix> tag_prefix(const MediaIndex& index, const Sample& s) {
  TagPrefix p;
  if (index.container == Container::Mp4) {
    Result<void> r = s.type == kSampleVideo   ? video_prefix(index, s, p)
                     : s.type == kSampleAudio ? audio_prefix(index, p)
                                              : Result<void>(Error(Errc::Malformed, "MP4 sample of a non-media type"));
    if (!r) return std::move(r).error();
  }
  if (s.size > kMaxTagBody - p.size) return Error(Errc::LimitExceeded, "sample too large for one RTMP message");
  return p;
}

Result<void> sample_to_tag_body(const MediaIndex& index, const Sample& s, std::span<const uint8_t> sample_bytes,
                                std::vector<uint8_t>& out) {
  if (sample_bytes.size() != s.size) return Error(Errc::Malformed, "sample bytes do not match the sample size");
  auto prefix = tag_prefix(index, s);
  if (!prefix) return std::move(prefix).error();
  out.insert(out.end(), prefix->span().begin(), prefix->span().end());
  out.insert(out.end(), sample_bytes.begin(), sample_bytes.end());
  return ok();
}

std::vector<uint8_t> avc_sequence_header(std::span<const uint8_t> avcc) {
  std::vector<uint8_t> out{static_cast<uint8_t>(kFrameKey << 4 | kLegacyVideoCodecAvc), 0x00, 0, 0, 0};
  out.insert(out.end(), avcc.begin(), avcc.end());
  return out;
}

std::vector<uint8_t> hevc_sequence_header(std::span<const uint8_t> hvcc) {
  std::vector<uint8_t> out;
  ByteWriter w(out);
  w.u8(static_cast<uint8_t>(kExHeaderBit | kFrameKey << 4 | 0));  // PacketType 0 = SequenceStart
  w.u32be(fourcc::kHvc1);
  w.bytes(hvcc);
  return out;
}

std::vector<uint8_t> aac_sequence_header(std::span<const uint8_t> asc) {
  std::vector<uint8_t> out{kAacHeader, 0x00};
  out.insert(out.end(), asc.begin(), asc.end());
  return out;
}

}  // namespace sluice::media::vod
