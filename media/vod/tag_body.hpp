// From file samples to FLV tag bodies (= RTMP audio/video message payloads).
//
// An FLV sample already is a tag body. An MP4 sample is a raw codec frame; the RTMP message is a
// few header bytes (the FLV codec header: frame type, packet type, composition time) followed by
// the sample bytes unchanged (MP4 H.264/HEVC samples are length-prefixed NAL units, exactly what
// FLV carries). tag_prefix() returns just those header bytes so that the server can send
// prefix + file bytes as two iovecs without copying the sample.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "media/flv/flv.hpp"
#include "media/vod/media_index.hpp"
#include "base/result.hpp"

namespace sluice::media::vod {

// The longest prefix: Enhanced RTMP video byte + FourCC + SI24 composition time is 8 bytes.
inline constexpr size_t kMaxTagPrefix = kFlvMaxCodecHeaderSize;
// An RTMP message (and an FLV tag body) is at most 0xFFFFFF bytes: its length field is a u24.
inline constexpr uint32_t kMaxTagBody = kFlvMaxDataSize;

struct TagPrefix {
  std::array<uint8_t, kMaxTagPrefix> bytes{};
  uint8_t size = 0;
  std::span<const uint8_t> span() const { return {bytes.data(), size}; }
};

// The bytes that precede sample `s`'s own bytes in its tag body. Empty for FLV files.
// Errors: Errc::Malformed when the sample does not fit the index (a type or codec the index does
// not have, a composition time outside SI24), Errc::LimitExceeded when prefix + sample would not
// fit in one RTMP message.
Result<TagPrefix> tag_prefix(const MediaIndex& index, const Sample& s);

// Appends the whole tag body (prefix + sample bytes) to `out`; for tests, tools and HTTP-FLV
// writers that want one contiguous buffer. `sample_bytes` must be the sample's s.size bytes.
Result<void> sample_to_tag_body(const MediaIndex& index, const Sample& s, std::span<const uint8_t> sample_bytes,
                                std::vector<uint8_t>& out);

// Sequence header tag bodies built from MP4 codec configuration boxes.
std::vector<uint8_t> avc_sequence_header(std::span<const uint8_t> avcc);   // 0x17 0x00 0 0 0 + avcC
std::vector<uint8_t> hevc_sequence_header(std::span<const uint8_t> hvcc);  // 0x90 'hvc1' + hvcC
std::vector<uint8_t> aac_sequence_header(std::span<const uint8_t> asc);    // 0xAF 0x00 + ASC

}  // namespace sluice::media::vod
