// Which of an offer's payload types Sluice takes: H.264 with packetization-mode=1 (RFC 6184; the
// constrained baseline profile preferred, since every browser decodes it in hardware or software),
// HEVC when the offer has it and the server asks for it, Opus at 48000/2 (RFC 7587); and the rtx
// payload type (RFC 4588) that repairs the chosen one. Video is never transcoded, so the choice is
// what the stream will be sent or received as (docs/webrtc-protocol.md, "Choosing codecs").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "protocol/webrtc/sdp_description.hpp"

namespace sluice::protocol::webrtc {

struct CodecPreferences {
  // Take HEVC (H265) over H.264 when the section offers it: a WHEP player of an HEVC stream.
  bool want_h265 = false;
  // The profile-level-id of the stream a player will get ("64001f"), when known: a payload type of
  // the same profile (its first two bytes: profile_idc and the constraint flags) is taken first.
  std::string_view h264_profile;
};

struct ChosenCodec {
  RtpCodec codec;
  std::optional<uint8_t> rtx_payload_type;
  // H.264: the profile-level-id of the chosen payload type ("42e01f"), lower case; empty when the
  // fmtp has none (which RFC 6184 reads as 420010, baseline).
  std::string h264_profile;
  // H.264: not constrained baseline (42e0xx / 42c0xx) or baseline (4200xx), nor the hinted
  // profile: taken because nothing better was offered.
  bool fallback = false;
};

// One parameter of an a=fmtp value ("packetization-mode" in "level-asymmetry-allowed=1;
// packetization-mode=1"), when present.
std::optional<std::string_view> fmtp_parameter(std::string_view fmtp, std::string_view name);

// The section's video codec, or nothing when it offers neither H.264 with packetization-mode=1 nor
// (when wanted) HEVC.
std::optional<ChosenCodec> choose_video_codec(const MediaSection& section, const CodecPreferences& preferences);

// The section's Opus 48000/2, when offered.
std::optional<ChosenCodec> choose_audio_codec(const MediaSection& section);

}  // namespace sluice::protocol::webrtc
