// An SDP offer (RFC 8866, with the WebRTC attributes of RFC 8829/JSEP) as WHIP and WHEP clients
// send it: Chromium, Firefox, OBS (libdatachannel) and GStreamer's webrtcbin. parse_sdp() keeps what
// an answer and the media path need; docs/webrtc-protocol.md ("What the clients offer") says what
// each client's offer looks like. The answer is built by protocol/webrtc/sdp_answer.hpp.
//
// Rules:
//  1. Input is untrusted and bounded: at most kMaxSdpSize bytes, kMaxSdpLines lines,
//     kMaxMediaSections m= sections, kMaxPayloadTypes formats per m= line, kMaxCandidates candidates
//     per section. Beyond a limit, or on a line that breaks the grammar of what is parsed, the
//     whole offer is refused with the line number ("sdp: line 12: ...").
//  2. Lines end with CRLF or LF. Attributes that are not listed below are skipped, as are lines
//     of types that carry nothing for WebRTC (i, u, e, p, b, r, z, k).
//  3. ice-ufrag, ice-pwd, fingerprint and setup may be given at the session level (OBS) or in every
//     section (Chromium, GStreamer); each MediaSection holds the value that applies to it. A
//     section's direction defaults to the session's, then to sendrecv.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.hpp"

namespace sluice::protocol::webrtc {

// Chromium's full offer is 6-7 KB; with simulcast and every codec about 12 KB.
inline constexpr size_t kMaxSdpSize = 64 * 1024;
inline constexpr size_t kMaxSdpLines = 2000;
// A publisher and a player need two; a browser with a screen share and a data channel, four.
inline constexpr size_t kMaxMediaSections = 16;
// Chromium's video m= line lists 23; RTP has 128 payload types in all.
inline constexpr size_t kMaxPayloadTypes = 64;
inline constexpr size_t kMaxCandidates = 64;
// ssrc and ssrc-group lines per section: Chromium sends 4 for one video track with rtx; simulcast
// with rtx and FEC, under 20.
inline constexpr size_t kMaxSsrcLines = 64;

enum class Direction : uint8_t { SendRecv, SendOnly, RecvOnly, Inactive };
enum class SetupRole : uint8_t { Unset, ActPass, Active, Passive, HoldConn };

std::string_view direction_name(Direction d);

struct RtpCodec {
  uint8_t payload_type = 0;
  std::string name;  // as written: "H264", "opus", "rtx"
  uint32_t clock_rate = 0;
  uint16_t channels = 0;              // 0 when not given
  std::string fmtp;                   // the a=fmtp parameters as written
  std::vector<std::string> feedback;  // a=rtcp-fb values: "nack", "nack pli", "transport-cc"
};

struct Extmap {
  uint16_t id = 0;
  std::string uri;
};

struct SsrcAttribute {
  uint32_t ssrc = 0;
  std::string attribute;  // "cname:xyz", "msid:stream track"
};

struct SsrcGroup {
  std::string semantics;  // "FID", "SIM", "FEC-FR"
  std::vector<uint32_t> ssrcs;
};

struct MediaSection {
  size_t line = 0;   // of the m= line, for messages
  std::string kind;  // "audio", "video", "application"
  uint16_t port = 0;
  std::string protocol;              // "UDP/TLS/RTP/SAVPF"
  std::vector<std::string> formats;  // as on the m= line
  std::string mid;
  Direction direction = Direction::SendRecv;
  bool rtcp_mux = false;
  bool rtcp_rsize = false;
  bool bundle_only = false;
  bool end_of_candidates = false;
  std::string ice_ufrag;
  std::string ice_pwd;
  std::string fingerprint_sha256;  // "AB:CD:...", 32 bytes in upper-case hex; empty: none
  SetupRole setup = SetupRole::Unset;
  std::string msid;
  std::vector<RtpCodec> codecs;  // in the m= line's order, for payload types with an a=rtpmap
  std::vector<Extmap> extmaps;
  std::vector<SsrcAttribute> ssrcs;
  std::vector<SsrcGroup> ssrc_groups;
  std::vector<std::string> candidates;  // the a=candidate values, kept as written

  bool is_rtp() const { return protocol.find("RTP/") != std::string::npos; }
  const RtpCodec* codec(uint8_t payload_type) const;
};

struct SessionDescription {
  std::string origin;                    // the o= line's value
  std::vector<std::string> bundle_mids;  // the first a=group:BUNDLE
  bool ice_lite = false;
  std::vector<MediaSection> media;

  const MediaSection* section(std::string_view mid) const;
};

// Errors: Errc::LimitExceeded for a limit of rule 1, Errc::Malformed for the rest; the message
// names the line ("sdp: line 7: a=rtpmap:abc: payload type is not 0..127").
Result<SessionDescription> parse_sdp(std::string_view text);

}  // namespace sluice::protocol::webrtc
