#include "media/codec/opus.hpp"

#include <cstring>

#include "base/byte_io.hpp"
#include "media/codec/flv_audio.hpp"
#include "media/codec/fourcc.hpp"

namespace sluice::media {

namespace {

constexpr char kOpusHeadMagic[8] = {'O', 'p', 'u', 's', 'H', 'e', 'a', 'd'};
constexpr size_t kOpusHeadSize = 19;

void ex_header(ByteWriter& w, AudioPacketType type) {
  w.u8(static_cast<uint8_t>(kSoundFormatExHeader << 4 | static_cast<uint8_t>(type)));
  w.u32be(fourcc::kOpus);
}

}  // namespace

std::vector<uint8_t> opus_head_bytes(const OpusHead& head) {
  std::vector<uint8_t> out;
  out.reserve(kOpusHeadSize);
  ByteWriter w(out);
  w.bytes(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(kOpusHeadMagic), sizeof kOpusHeadMagic));
  w.u8(1);  // version
  w.u8(head.channels);
  w.u8(static_cast<uint8_t>(head.pre_skip));  // the little-endian fields of RFC 7845
  w.u8(static_cast<uint8_t>(head.pre_skip >> 8));
  w.u32le(head.input_sample_rate);
  const auto gain = static_cast<uint16_t>(head.output_gain);
  w.u8(static_cast<uint8_t>(gain));
  w.u8(static_cast<uint8_t>(gain >> 8));
  w.u8(0);  // channel mapping family 0: mono or stereo, no mapping table
  return out;
}

std::optional<OpusHead> parse_opus_head(std::span<const uint8_t> bytes) {
  if (bytes.size() < kOpusHeadSize || std::memcmp(bytes.data(), kOpusHeadMagic, sizeof kOpusHeadMagic) != 0) {
    return std::nullopt;
  }
  if (bytes[8] > 15) return std::nullopt;  // an incompatible major version
  OpusHead h;
  h.channels = bytes[9];
  h.pre_skip = static_cast<uint16_t>(bytes[10] | bytes[11] << 8);
  ByteReader r(bytes.subspan(12, 4));
  h.input_sample_rate = r.u32le();
  h.output_gain = static_cast<int16_t>(static_cast<uint16_t>(bytes[16] | bytes[17] << 8));
  return h;
}

std::vector<uint8_t> opus_sequence_header_body(const OpusHead& head) {
  std::vector<uint8_t> out;
  ByteWriter w(out);
  ex_header(w, AudioPacketType::SequenceStart);
  w.bytes(opus_head_bytes(head));
  return out;
}

std::vector<uint8_t> opus_frame_body(std::span<const uint8_t> packet) {
  std::vector<uint8_t> out;
  out.reserve(kOpusBodyPrefix + packet.size());
  ByteWriter w(out);
  ex_header(w, AudioPacketType::CodedFrames);
  w.bytes(packet);
  return out;
}

std::optional<OpusBody> read_opus_body(std::span<const uint8_t> body) {
  auto h = parse_audio_tag(body);
  if (!h || h->codec() != AudioCodec::Opus) return std::nullopt;
  const TrackData* t = h->tracks.first();
  if (t == nullptr) return std::nullopt;
  if (h->packet_type != AudioPacketType::SequenceStart && h->packet_type != AudioPacketType::CodedFrames) {
    return std::nullopt;
  }
  return OpusBody{h->packet_type == AudioPacketType::SequenceStart, t->data_offset, t->data_size};
}

}  // namespace sluice::media
