// The SDP a WHEP load player sends and what it needs from the answer (sluice-bench `whep`).
//
// The offer is a browser's recvonly offer cut to what the bench takes: H.264 (packetization-mode=1,
// profile-level-id 42e01f, NACK and PLI feedback) and Opus, BUNDLE, rtcp-mux, the player's ICE
// credentials and certificate fingerprint, a=setup:actpass. The answer is read with the server's own
// parser (protocol/webrtc/sdp_parser): ICE credentials, the server's fingerprint, the first UDP
// host candidate, and each accepted section's payload type and SSRC.
#pragma once

#include <sys/socket.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "base/result.hpp"

namespace sluice::bench {

struct WhepOfferParams {
  std::string ice_ufrag;
  std::string ice_pwd;
  std::string fingerprint;  // "AB:CD:..." (SHA-256 of the player's certificate)
  uint64_t session_id = 0;
};
std::string make_whep_offer(const WhepOfferParams& p);

struct WhepAnswer {
  std::string ice_ufrag;
  std::string ice_pwd;
  std::string fingerprint;  // the server's a=fingerprint:sha-256 value
  sockaddr_storage candidate{};
  std::string candidate_text;  // "127.0.0.1 40000", for messages
  uint8_t video_pt = 0;        // 0: the section was refused
  uint8_t audio_pt = 0;
  uint32_t video_ssrc = 0;  // 0: not announced
  uint32_t audio_ssrc = 0;
};
// Errc::Malformed when the answer does not parse or lacks what ICE and DTLS need (credentials, a
// fingerprint, a UDP candidate, a=setup:passive or active is not what a WHEP server answers).
Result<WhepAnswer> parse_whep_answer(std::string_view sdp);

// ICE credentials: characters of ice-char (RFC 8839), random.
std::string random_ice_token(size_t length);

}  // namespace sluice::bench
