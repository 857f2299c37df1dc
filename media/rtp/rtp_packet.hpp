// RTP packets (docs/rtp.md, "RTP header"): the fixed header, CSRCs, the header extension with
// the one-byte and two-byte element forms, padding. Reading is bounded and never trusts a length
// (any input either parses or gives an error); writing builds the header in front of a payload
// the caller keeps (the payloads of a frame are built once and shared by every player,
// media/rtp/h264_packetizer.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "base/result.hpp"

namespace sluice::media::rtp {

inline constexpr size_t kRtpFixedHeaderSize = 12;
inline constexpr uint16_t kOneByteExtensionProfile = 0xBEDE;
inline constexpr uint16_t kTwoByteExtensionProfile = 0x1000;  // the top 12 bits; the low 4 are app bits

// The RTP clocks of the payload formats Sluice carries: video at 90 kHz (RFC 6184, RFC 7798),
// Opus at 48 kHz whatever its sampling rate (RFC 7587; docs/rtp.md, "Opus over RTP").
inline constexpr uint32_t kVideoClockRate = 90000;
inline constexpr uint32_t kOpusClockRate = 48000;

// A parsed packet: spans into the bytes it was read from.
struct RtpPacketView {
  bool marker = false;
  uint8_t payload_type = 0;
  uint16_t sequence = 0;
  uint32_t timestamp = 0;
  uint32_t ssrc = 0;
  uint8_t csrc_count = 0;
  std::span<const uint8_t> csrcs;  // 4 bytes each
  bool has_extension = false;
  uint16_t extension_profile = 0;
  std::span<const uint8_t> extension;  // the extension's data, after its 4-byte header
  std::span<const uint8_t> payload;    // without padding
  uint8_t padding = 0;                 // bytes of padding that followed the payload

  uint32_t csrc(size_t i) const;
};

// Errors: Truncated (shorter than its header, CSRCs or extension), BadVersion (not 2),
// Malformed (a padding count of 0 or past the payload).
Result<RtpPacketView> parse_rtp(std::span<const uint8_t> packet);

// One header extension element (RFC 8285): an id and its data.
struct RtpExtension {
  uint8_t id = 0;
  std::span<const uint8_t> data;
};

// The elements of a one-byte (0xBEDE) or two-byte (0x100x) extension, in order; padding bytes are
// skipped, and the one-byte form stops at id 15. Another profile has no elements. Malformed when
// an element runs past the extension; at most kMaxExtensions elements are kept.
inline constexpr size_t kMaxExtensions = 32;
Result<std::vector<RtpExtension>> read_extensions(const RtpPacketView& packet);
// The data of element `id`, if the packet has it (and its extension parses).
std::optional<std::span<const uint8_t>> find_extension(const RtpPacketView& packet, uint8_t id);

// What a written header says. Extensions use the one-byte form when every id is 1..14 and every
// element 1..16 bytes, else the two-byte form (ids 1..255, 0..255 bytes).
struct RtpHeader {
  bool marker = false;
  uint8_t payload_type = 0;  // 0..127
  uint16_t sequence = 0;
  uint32_t timestamp = 0;
  uint32_t ssrc = 0;
  std::span<const uint32_t> csrcs;           // at most 15
  std::span<const RtpExtension> extensions;  // none: no extension
};

// The 12 fixed bytes (no CSRC, no extension): what a player's copy of a shared payload needs.
void write_fixed_header(uint8_t* out, bool marker, uint8_t payload_type, uint16_t sequence, uint32_t timestamp,
                        uint32_t ssrc);

// Appends the whole header to `out`. Malformed for more than 15 CSRCs, an extension id of 0 (or
// 15 in the one-byte form, which then is not chosen), or a payload type past 127.
Result<void> write_rtp_header(const RtpHeader& header, std::vector<uint8_t>& out);

}  // namespace sluice::media::rtp
