// FLV container framing (docs/protocol.md, "FLV framing"): the 9-byte file header, 11-byte tag
// headers and the u32 PreviousTagSize after each tag. RTMP message types 8/9/18 are FLV tag types,
// and an RTMP payload is a tag body, so a recorder or HTTP-FLV writer only adds these headers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "base/result.hpp"

namespace sluice::media {

inline constexpr size_t kFlvFileHeaderSize = 9;
inline constexpr size_t kFlvTagHeaderSize = 11;
inline constexpr size_t kFlvPreviousTagSizeSize = 4;
inline constexpr uint32_t kFlvMaxDataSize = 0xFFFFFF;  // DataSize is a u24
// The longest FLV codec header in front of a raw codec frame (an MP4 sample) in a tag body: an
// Enhanced RTMP video byte + FourCC + SI24 composition time is 8 bytes; 16 leaves room.
inline constexpr size_t kFlvMaxCodecHeaderSize = 16;

struct FlvFileHeader {
  uint8_t version = 1;
  bool has_audio = false;
  bool has_video = false;
  uint32_t data_offset = kFlvFileHeaderSize;  // where the body (PreviousTagSize0) starts
};

struct FlvTagHeader {
  uint8_t type = 0;        // 8 audio, 9 video, 18 script (AMF0), 15 script (AMF3)
  bool filter = false;     // encrypted (out of scope; reported, not interpreted)
  uint32_t data_size = 0;  // bytes of tag body after the header
  uint32_t timestamp = 0;  // u24 low bits + u8 high bits, ms, modular
  uint32_t stream_id = 0;  // always 0 in practice
};

// Appends the 9-byte file header and PreviousTagSize0 (13 bytes).
void write_flv_header(bool audio, bool video, std::vector<uint8_t>& out);
// Writes an 11-byte tag header at out11. `size` above 0xFFFFFF cannot be represented: the caller
// must not produce such tags (an RTMP message is at most 0xFFFFFF bytes anyway).
void write_tag_header(uint8_t type, uint32_t size, uint32_t ts, uint8_t* out11);
// Writes the PreviousTagSize that follows a tag whose body is `tag_data_size` bytes, i.e. the
// value 11 + tag_data_size.
void write_previous_tag_size(uint32_t tag_data_size, uint8_t* out4);
// Appends header + body + PreviousTagSize: one whole tag.
void append_tag(uint8_t type, uint32_t ts, std::span<const uint8_t> body, std::vector<uint8_t>& out);

Result<FlvFileHeader> parse_flv_header(std::span<const uint8_t> bytes);
Result<FlvTagHeader> parse_tag_header(std::span<const uint8_t> bytes);

}  // namespace sluice::media
