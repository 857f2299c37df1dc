// The SDP answer of an ICE-lite WHIP/WHEP server to an offer (protocol/webrtc/sdp_description.hpp).
// docs/webrtc-protocol.md ("The answer") says why each line is there.
//
// What it decides, per m= section, in the offer's order (an answer has the same sections):
//  1. Accepted: the first audio and the first video section that are RTP with rtcp-mux, in the
//     offer's BUNDLE group (or the first such section when there is none), whose direction fits
//     the role (a WHIP publisher sends: sendonly or sendrecv; a WHEP player receives: recvonly or
//     sendrecv) and that offer a codec Sluice takes (protocol/webrtc/sdp_codecs.hpp).
//  2. Everything else is rejected: port 0, with the reason in AnswerSection for the log.
//  3. The offer as a whole is refused when nothing is accepted, when an accepted section has no
//     ice-ufrag/ice-pwd or no sha-256 fingerprint, or when its a=setup leaves us no DTLS role.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/result.hpp"
#include "protocol/proxy_header.hpp"
#include "protocol/webrtc/sdp_codecs.hpp"
#include "protocol/webrtc/sdp_description.hpp"

namespace sluice::protocol::webrtc {

enum class WebrtcRole : uint8_t {
  Whip,  // the client publishes: we receive
  Whep,  // the client plays: we send
};

// Congestion feedback offered back: REMB (the receiver says a bitrate) or transport-wide CC (the
// receiver reports every packet's arrival and the sender estimates).
enum class CongestionFeedback : uint8_t { Remb, TransportCc };

// What we send, for a WHEP answer's a=ssrc and a=msid lines.
struct OutgoingStream {
  uint32_t ssrc = 0;
  uint32_t rtx_ssrc = 0;  // 0: none (rtx still negotiated when offered, for NACKed packets)
  std::string track_id;
};

struct AnswerConfig {
  WebrtcRole role = WebrtcRole::Whip;
  std::string ice_ufrag;
  std::string ice_pwd;
  std::string fingerprint_sha256;    // our certificate's, "AB:CD:..."
  std::vector<IpAddress> addresses;  // host candidates, all on `port`
  uint16_t port = 0;
  CodecPreferences codecs;
  CongestionFeedback feedback = CongestionFeedback::Remb;
  uint64_t session_id = 1;  // the o= line's, any 63-bit number
  // WHEP only.
  std::string cname = "sluice";
  std::string stream_id = "sluice";
  OutgoingStream video;
  OutgoingStream audio;
};

struct AnswerSection {
  std::string mid;
  std::string kind;
  bool accepted = false;
  std::string reason;                         // why rejected
  Direction direction = Direction::Inactive;  // ours, when accepted
  std::optional<ChosenCodec> codec;
};

struct SdpAnswer {
  std::string sdp;
  std::vector<AnswerSection> sections;  // the offer's order
};

// Errors: Errc::Unsupported when nothing can be accepted (the message gives each section's
// reason), Errc::Malformed when the offer lacks what DTLS or ICE need.
Result<SdpAnswer> build_answer(const SessionDescription& offer, const AnswerConfig& config);

}  // namespace sluice::protocol::webrtc
