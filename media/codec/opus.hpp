// Opus in the hub's canonical form: Enhanced RTMP v2 audio with the FourCC 'Opus' (docs/protocol.md,
// "ExAudioTagHeader"; docs/rtp.md, "Opus in the hub"). A SequenceStart body carries the Opus
// identification header (RFC 7845 5.1, "OpusHead"); a CodedFrames body carries one Opus packet as
// it came (RFC 6716), with no length or TOC rewriting. WebRTC's Opus always runs at 48 kHz.
//
//   SequenceStart: 0x90 'O' 'p' 'u' 's' OpusHead(19 bytes for mapping family 0)
//   CodedFrames:   0x91 'O' 'p' 'u' 's' <one Opus packet>
//
// Reading also takes the unofficial legacy form (sound format 13, one header byte), which some
// publishers send (media/codec/flv_audio.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace sluice::media {

inline constexpr uint32_t kOpusSampleRate = 48000;
inline constexpr size_t kOpusBodyPrefix = 5;  // ExAudioTagHeader byte + FourCC

struct OpusHead {
  uint8_t channels = 2;
  uint16_t pre_skip = 0;           // 48 kHz samples the decoder drops at the start
  uint32_t input_sample_rate = 0;  // informative only; 0 = unknown
  int16_t output_gain = 0;         // Q7.8 dB
};

// RFC 7845 5.1 with channel mapping family 0 (mono or stereo): 19 bytes.
std::vector<uint8_t> opus_head_bytes(const OpusHead& head);
// Nothing unless it starts with "OpusHead", is version 0..15 and has at least 19 bytes.
std::optional<OpusHead> parse_opus_head(std::span<const uint8_t> bytes);

// The canonical sequence header and frame bodies.
std::vector<uint8_t> opus_sequence_header_body(const OpusHead& head);
std::vector<uint8_t> opus_frame_body(std::span<const uint8_t> packet);

// What an audio tag body is, if it is Opus: its packet (a CodedFrames body) or its OpusHead bytes
// (a SequenceStart body, possibly empty). Nothing for another codec, a multitrack body (the
// default track is taken when it is Opus) or a body that does not parse.
struct OpusBody {
  bool sequence_header = false;
  size_t offset = 0;  // where the packet or OpusHead starts in the body
  size_t size = 0;
};
std::optional<OpusBody> read_opus_body(std::span<const uint8_t> body);

}  // namespace sluice::media
