#include "protocol/webrtc/sdp_answer.hpp"

#include <algorithm>
#include <array>
#include <string_view>

namespace sluice::protocol::webrtc {
namespace {

constexpr std::string_view kExtMid = "urn:ietf:params:rtp-hdrext:sdes:mid";
constexpr std::string_view kExtTransportCc =
    "http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01";
constexpr std::string_view kExtAbsSendTime = "http://www.webrtc.org/experiments/rtp-hdrext/abs-send-time";

bool contains(const std::vector<std::string>& list, std::string_view item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

// Why a section cannot be accepted, or empty; `direction` gets ours.
std::string refusal(const SessionDescription& offer, const MediaSection& m, const AnswerConfig& config,
                    bool bundle_taken, Direction& direction) {
  if (m.kind != "audio" && m.kind != "video") return "a '" + m.kind + "' section (only audio and video)";
  if (!m.is_rtp()) return "protocol " + m.protocol + " is not RTP";
  if (m.mid.empty()) return "no a=mid (BUNDLE needs one)";
  if (m.port == 0 && !m.bundle_only) return "port 0: the offer rejects it itself";
  if (!offer.bundle_mids.empty() && !contains(offer.bundle_mids, m.mid)) return "not in the BUNDLE group";
  if (offer.bundle_mids.empty() && bundle_taken) return "no BUNDLE group, and one transport is all Sluice has";
  if (!m.rtcp_mux) return "no a=rtcp-mux (RTCP goes beside RTP only)";
  if (config.role == WebrtcRole::Whip) {
    if (m.direction != Direction::SendOnly && m.direction != Direction::SendRecv) {
      return "a WHIP publisher's " + m.kind + " must send, it is " + std::string(direction_name(m.direction));
    }
    direction = Direction::RecvOnly;
  } else {
    if (m.direction != Direction::RecvOnly && m.direction != Direction::SendRecv) {
      return "a WHEP player's " + m.kind + " must receive, it is " + std::string(direction_name(m.direction));
    }
    direction = Direction::SendOnly;
  }
  return {};
}

AnswerSection decide(const SessionDescription& offer, const MediaSection& m, const AnswerConfig& config,
                     const std::vector<AnswerSection>& so_far) {
  AnswerSection s;
  s.mid = m.mid;
  s.kind = m.kind;
  const bool bundle_taken = std::any_of(so_far.begin(), so_far.end(), [](const auto& a) { return a.accepted; });
  s.reason = refusal(offer, m, config, bundle_taken, s.direction);
  if (!s.reason.empty()) return s;
  for (const auto& earlier : so_far) {
    if (earlier.accepted && earlier.kind == m.kind) {
      s.reason = "a second " + m.kind + " section";
      return s;
    }
  }
  if (m.kind == "video") {
    s.codec = choose_video_codec(m, config.codecs);
    if (!s.codec)
      s.reason = config.codecs.want_h265 ? "no H265, nor H.264 with packetization-mode=1"
                                         : "no H.264 with packetization-mode=1";
  } else {
    s.codec = choose_audio_codec(m);
    if (!s.codec) s.reason = "no opus/48000/2";
  }
  s.accepted = s.codec.has_value();
  return s;
}

// Checks what ICE and DTLS need of an accepted section.
Result<void> transport_ready(const MediaSection& m, size_t index) {
  const std::string where = "sdp: section " + std::to_string(index + 1) + " (mid " + m.mid + "): ";
  if (m.ice_ufrag.empty() || m.ice_pwd.empty()) return Error(Errc::Malformed, where + "no a=ice-ufrag or a=ice-pwd");
  if (m.fingerprint_sha256.empty()) return Error(Errc::Malformed, where + "no a=fingerprint:sha-256");
  // We are always the DTLS server (a=setup:passive): an offerer that insists on being passive
  // too, or holds the connection, leaves no client.
  if (m.setup == SetupRole::Passive || m.setup == SetupRole::HoldConn) {
    return Error(Errc::Malformed, where + "a=setup:" + (m.setup == SetupRole::Passive ? "passive" : "holdconn") +
                                      " leaves no DTLS client (we are passive)");
  }
  return {};
}

std::string connection_line(const AnswerConfig& config) {
  if (config.addresses.empty()) return "c=IN IP4 0.0.0.0\r\n";
  const IpAddress& a = config.addresses.front();
  return std::string("c=IN ") + (a.v6 ? "IP6 " : "IP4 ") + a.to_string() + "\r\n";
}

void write_codec(std::string& out, const MediaSection& offered, const ChosenCodec& chosen, const AnswerConfig& config) {
  const RtpCodec& c = chosen.codec;
  const std::string pt = std::to_string(c.payload_type);
  out += "a=rtpmap:" + pt + " " + c.name + "/" + std::to_string(c.clock_rate);
  if (c.channels) out += "/" + std::to_string(c.channels);
  out += "\r\n";
  // Only feedback the offer has for this payload type (JSEP: an answer takes a subset).
  const std::array<std::string_view, 4> wanted = {
      "nack", "nack pli", "ccm fir", config.feedback == CongestionFeedback::Remb ? "goog-remb" : "transport-cc"};
  for (std::string_view fb : wanted) {
    if (contains(c.feedback, fb)) out += "a=rtcp-fb:" + pt + " " + std::string(fb) + "\r\n";
  }
  if (!c.fmtp.empty()) out += "a=fmtp:" + pt + " " + c.fmtp + "\r\n";
  if (chosen.rtx_payload_type) {
    const RtpCodec* rtx = offered.codec(*chosen.rtx_payload_type);
    const std::string rtx_pt = std::to_string(*chosen.rtx_payload_type);
    out += "a=rtpmap:" + rtx_pt + " rtx/" + std::to_string(rtx ? rtx->clock_rate : c.clock_rate) + "\r\n";
    out += "a=fmtp:" + rtx_pt + " apt=" + pt + "\r\n";
  }
}

void write_outgoing(std::string& out, const AnswerSection& s, const AnswerConfig& config) {
  const OutgoingStream& o = s.kind == "video" ? config.video : config.audio;
  const std::string msid = config.stream_id + " " + o.track_id;
  out += "a=msid:" + msid + "\r\n";
  const bool rtx = o.rtx_ssrc != 0 && s.codec && s.codec->rtx_payload_type;
  if (rtx) out += "a=ssrc-group:FID " + std::to_string(o.ssrc) + " " + std::to_string(o.rtx_ssrc) + "\r\n";
  for (uint32_t ssrc : {o.ssrc, rtx ? o.rtx_ssrc : 0u}) {
    if (ssrc == 0) continue;
    out += "a=ssrc:" + std::to_string(ssrc) + " cname:" + config.cname + "\r\n";
    out += "a=ssrc:" + std::to_string(ssrc) + " msid:" + msid + "\r\n";
  }
}

void write_candidates(std::string& out, const AnswerConfig& config) {
  for (size_t i = 0; i < config.addresses.size(); ++i) {
    // RFC 8445 5.1.2.1: type preference 126 (host), local preference falling with the order
    // given, component 1.
    const uint32_t priority = (126u << 24) | ((65535u - static_cast<uint32_t>(i)) << 8) | 255u;
    out += "a=candidate:" + std::to_string(i + 1) + " 1 udp " + std::to_string(priority) + " " +
           config.addresses[i].to_string() + " " + std::to_string(config.port) + " typ host\r\n";
  }
  out += "a=end-of-candidates\r\n";
}

void write_accepted(std::string& out, const MediaSection& m, const AnswerSection& s, const AnswerConfig& config) {
  const ChosenCodec& chosen = *s.codec;
  out += "m=" + m.kind + " " + std::to_string(config.addresses.empty() ? 9 : config.port) + " " + m.protocol + " " +
         std::to_string(chosen.codec.payload_type);
  if (chosen.rtx_payload_type) out += " " + std::to_string(*chosen.rtx_payload_type);
  out += "\r\n" + connection_line(config);
  out += "a=mid:" + m.mid + "\r\n";
  out += "a=ice-ufrag:" + config.ice_ufrag + "\r\na=ice-pwd:" + config.ice_pwd + "\r\n";
  out += "a=fingerprint:sha-256 " + config.fingerprint_sha256 + "\r\n";
  out += "a=setup:passive\r\n";
  out += "a=" + std::string(direction_name(s.direction)) + "\r\n";
  out += "a=rtcp-mux\r\n";
  if (m.rtcp_rsize) out += "a=rtcp-rsize\r\n";
  const std::string_view congestion = config.feedback == CongestionFeedback::Remb ? kExtAbsSendTime : kExtTransportCc;
  for (const auto& e : m.extmaps) {
    if (e.uri == kExtMid || e.uri == congestion) out += "a=extmap:" + std::to_string(e.id) + " " + e.uri + "\r\n";
  }
  write_codec(out, m, chosen, config);
  if (config.role == WebrtcRole::Whep) write_outgoing(out, s, config);
  write_candidates(out, config);
}

void write_rejected(std::string& out, const MediaSection& m) {
  out += "m=" + m.kind + " 0 " + m.protocol + " " + m.formats.front() + "\r\nc=IN IP4 0.0.0.0\r\n";
  if (!m.mid.empty()) out += "a=mid:" + m.mid + "\r\n";
}

}  // namespace

Result<SdpAnswer> build_answer(const SessionDescription& offer, const AnswerConfig& config) {
  SdpAnswer answer;
  std::string why_none;
  for (size_t i = 0; i < offer.media.size(); ++i) {
    AnswerSection s = decide(offer, offer.media[i], config, answer.sections);
    if (s.accepted) {
      auto ready = transport_ready(offer.media[i], i);
      if (!ready) return std::move(ready).error();
    } else {
      why_none +=
          (why_none.empty() ? "" : "; ") + std::string("mid ") + (s.mid.empty() ? "?" : s.mid) + ": " + s.reason;
    }
    answer.sections.push_back(std::move(s));
  }
  if (std::none_of(answer.sections.begin(), answer.sections.end(), [](const auto& s) { return s.accepted; })) {
    return Error(Errc::Unsupported,
                 "sdp: nothing to accept" + (why_none.empty() ? std::string(" (no media)") : ": " + why_none));
  }
  std::string& out = answer.sdp;
  out = "v=0\r\no=- " + std::to_string(config.session_id) + " 2 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\n";
  out += "a=ice-lite\r\na=group:BUNDLE";
  for (const auto& s : answer.sections) {
    if (s.accepted) out += " " + s.mid;
  }
  out += "\r\n";
  for (size_t i = 0; i < offer.media.size(); ++i) {
    if (answer.sections[i].accepted) {
      write_accepted(out, offer.media[i], answer.sections[i], config);
    } else {
      write_rejected(out, offer.media[i]);
    }
  }
  return answer;
}

}  // namespace sluice::protocol::webrtc
