#include "media/flv/flv.hpp"

#include "base/byte_io.hpp"

namespace sluice::media {

namespace {
constexpr uint8_t kFlagAudio = 0x04;
constexpr uint8_t kFlagVideo = 0x01;
constexpr uint8_t kTagTypeMask = 0x1F;
constexpr uint8_t kTagFilterBit = 0x20;
}  // namespace

void write_flv_header(bool audio, bool video, std::vector<uint8_t>& out) {
  const uint8_t flags = static_cast<uint8_t>((audio ? kFlagAudio : 0) | (video ? kFlagVideo : 0));
  const uint8_t header[kFlvFileHeaderSize + kFlvPreviousTagSizeSize] = {'F', 'L', 'V', 1, flags, 0, 0,
                                                                        0,   9,   0,   0, 0,     0};
  out.insert(out.end(), std::begin(header), std::end(header));
}

void write_tag_header(uint8_t type, uint32_t size, uint32_t ts, uint8_t* out11) {
  out11[0] = type & kTagTypeMask;
  store_u24be(out11 + 1, size & kFlvMaxDataSize);
  store_u24be(out11 + 4, ts & 0xFFFFFF);
  out11[7] = static_cast<uint8_t>(ts >> 24);  // TimestampExtended: the high 8 bits
  store_u24be(out11 + 8, 0);                  // StreamID
}

void write_previous_tag_size(uint32_t tag_data_size, uint8_t* out4) {
  store_u32be(out4, static_cast<uint32_t>(kFlvTagHeaderSize) + tag_data_size);
}

void append_tag(uint8_t type, uint32_t ts, std::span<const uint8_t> body, std::vector<uint8_t>& out) {
  const uint32_t size = static_cast<uint32_t>(body.size());
  uint8_t header[kFlvTagHeaderSize];
  uint8_t trailer[kFlvPreviousTagSizeSize];
  write_tag_header(type, size, ts, header);
  write_previous_tag_size(size, trailer);
  out.insert(out.end(), std::begin(header), std::end(header));
  out.insert(out.end(), body.begin(), body.end());
  out.insert(out.end(), std::begin(trailer), std::end(trailer));
}

Result<FlvFileHeader> parse_flv_header(std::span<const uint8_t> bytes) {
  if (bytes.size() < kFlvFileHeaderSize) return Error(Errc::Truncated, "FLV file header");
  if (bytes[0] != 'F' || bytes[1] != 'L' || bytes[2] != 'V')
    return Error(Errc::Malformed, "not an FLV file (signature)");
  FlvFileHeader h;
  h.version = bytes[3];
  h.has_audio = (bytes[4] & kFlagAudio) != 0;
  h.has_video = (bytes[4] & kFlagVideo) != 0;
  h.data_offset = load_u32be(bytes.data() + 5);
  if (h.data_offset < kFlvFileHeaderSize) return Error(Errc::Malformed, "FLV DataOffset below 9");
  return h;
}

Result<FlvTagHeader> parse_tag_header(std::span<const uint8_t> bytes) {
  if (bytes.size() < kFlvTagHeaderSize) return Error(Errc::Truncated, "FLV tag header");
  ByteReader r(bytes);
  FlvTagHeader h;
  const uint8_t b0 = r.u8();
  h.type = b0 & kTagTypeMask;
  h.filter = (b0 & kTagFilterBit) != 0;
  h.data_size = r.u24be();
  const uint32_t low = r.u24be();
  h.timestamp = low | uint32_t{r.u8()} << 24;
  h.stream_id = r.u24be();
  return h;
}

}  // namespace sluice::media
