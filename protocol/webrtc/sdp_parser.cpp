// parse_sdp (protocol/webrtc/sdp_description.hpp): one pass over the lines, session attributes
// applied to the sections at the end.
#include <algorithm>
#include <charconv>
#include <optional>

#include "protocol/webrtc/sdp_description.hpp"

namespace sluice::protocol::webrtc {
namespace {

// How much of a peer's text an error message quotes.
constexpr size_t kQuoteMax = 40;
// a=rtcp-fb values kept per codec (Chromium sends 5) and a=extmap lines per section (Chromium
// sends 11 for video); more are dropped, which only narrows the answer.
constexpr size_t kMaxFeedback = 16;
constexpr size_t kMaxExtmaps = 32;
// Chromium's mids are "0", "1"; GStreamer's "video0".
constexpr size_t kMaxMid = 64;

std::string quoted(std::string_view text) {
  std::string out;
  for (char c : text.substr(0, kQuoteMax)) out += (c >= 0x20 && c < 0x7F) ? c : '?';
  if (text.size() > kQuoteMax) out += "...";
  return out;
}

template <typename T>
std::optional<T> number(std::string_view text) {
  T v{};
  if (text.empty()) return std::nullopt;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return v;
}

std::optional<uint8_t> payload_type(std::string_view text) {
  auto v = number<unsigned>(text);
  if (!v || *v > 127) return std::nullopt;
  return static_cast<uint8_t>(*v);
}

// Splits off the text before the first `sep`; `rest` keeps what follows it.
std::string_view take(std::string_view& rest, char sep) {
  const size_t at = rest.find(sep);
  std::string_view head = rest.substr(0, at);
  rest = at == std::string_view::npos ? std::string_view{} : rest.substr(at + 1);
  return head;
}

bool is_hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

// "AB:CD:..." with 32 bytes, returned in upper case (RFC 8122 allows either case).
std::optional<std::string> sha256_fingerprint(std::string_view value) {
  if (value.size() != 32 * 3 - 1) return std::nullopt;
  std::string out(value);
  for (size_t i = 0; i < out.size(); ++i) {
    if (i % 3 == 2) {
      if (out[i] != ':') return std::nullopt;
    } else {
      if (!is_hex(out[i])) return std::nullopt;
      if (out[i] >= 'a') out[i] = static_cast<char>(out[i] - 'a' + 'A');
    }
  }
  return out;
}

// The attributes that may stand at the session level and apply to every section without its own.
struct SessionDefaults {
  std::string ice_ufrag, ice_pwd, fingerprint;
  SetupRole setup = SetupRole::Unset;
  std::optional<Direction> direction;
};

class Parser {
 public:
  Result<SessionDescription> run(std::string_view text);

 private:
  Error fail(std::string what) const {
    return Error(Errc::Malformed, "sdp: line " + std::to_string(line_) + ": " + std::move(what));
  }
  Error limit(std::string what) const {
    return Error(Errc::LimitExceeded, "sdp: line " + std::to_string(line_) + ": " + std::move(what));
  }
  Result<void> media_line(std::string_view value);
  Result<void> attribute(std::string_view name, std::string_view value, bool has_value);
  Result<void> media_attribute(MediaSection& m, std::string_view name, std::string_view value);
  Result<void> rtp_attribute(MediaSection& m, std::string_view name, std::string_view value);
  RtpCodec* codec_of(MediaSection& m, std::string_view pt_text, std::string_view name, Result<void>& error);

  SessionDescription sdp_;
  SessionDefaults defaults_;
  std::vector<bool> direction_set_;  // per section: an explicit direction attribute
  size_t line_ = 0;
};

Result<void> Parser::media_line(std::string_view value) {
  if (sdp_.media.size() == kMaxMediaSections) {
    return Error(Errc::LimitExceeded, "sdp: more than " + std::to_string(kMaxMediaSections) + " media sections");
  }
  MediaSection m;
  m.line = line_;
  std::string_view rest = value;
  m.kind = std::string(take(rest, ' '));
  std::string_view port = take(rest, ' ');
  port = port.substr(0, port.find('/'));  // "9/2": a port count, which WebRTC never uses
  auto p = number<uint16_t>(port);
  if (m.kind.empty() || !p) return fail("m=" + quoted(value) + ": not 'kind port protocol formats'");
  m.port = *p;
  m.protocol = std::string(take(rest, ' '));
  if (m.protocol.empty()) return fail("m= line without a protocol");
  while (!rest.empty()) {
    std::string_view format = take(rest, ' ');
    if (format.empty()) continue;
    if (m.formats.size() == kMaxPayloadTypes) {
      return limit("more than " + std::to_string(kMaxPayloadTypes) + " payload types");
    }
    if (m.is_rtp()) {
      auto pt = payload_type(format);
      if (!pt) return fail("payload type '" + quoted(format) + "' is not 0..127");
      // One entry per payload type in the m= line's order, named by its a=rtpmap: Firefox writes
      // a=fmtp before a=rtpmap, so both must find the entry whichever comes first.
      if (!m.codec(*pt)) m.codecs.push_back(RtpCodec{*pt, {}, 0, 0, {}, {}});
    }
    m.formats.emplace_back(format);
  }
  if (m.formats.empty()) return fail("m= line without formats");
  sdp_.media.push_back(std::move(m));
  direction_set_.push_back(false);
  return {};
}

RtpCodec* Parser::codec_of(MediaSection& m, std::string_view pt_text, std::string_view name, Result<void>& error) {
  auto pt = payload_type(pt_text);
  if (!pt) {
    error = fail("a=" + std::string(name) + ": payload type '" + quoted(pt_text) + "' is not 0..127");
    return nullptr;
  }
  for (auto& c : m.codecs) {
    if (c.payload_type == *pt) return &c;
  }
  return nullptr;  // not on the m= line: ignored
}

Result<void> Parser::rtp_attribute(MediaSection& m, std::string_view name, std::string_view value) {
  std::string_view rest = value;
  const std::string_view pt_text = take(rest, ' ');
  if (name == "rtpmap") {
    Result<void> error;
    RtpCodec* c = codec_of(m, pt_text, name, error);
    if (!error) return error;
    std::string_view codec_name = take(rest, '/');
    auto clock = number<uint32_t>(take(rest, '/'));
    if (codec_name.empty() || !clock) return fail("a=rtpmap:" + quoted(value) + ": not 'pt name/clock[/channels]'");
    std::optional<uint16_t> channels;
    if (!rest.empty() && !(channels = number<uint16_t>(rest))) {
      return fail("a=rtpmap:" + quoted(value) + ": channels is not a number");
    }
    if (!c) return {};  // a payload type the m= line does not list
    if (!c->name.empty()) return fail("a second a=rtpmap for payload type " + std::string(pt_text));
    c->name = std::string(codec_name);
    c->clock_rate = *clock;
    c->channels = channels.value_or(0);
    return {};
  }
  if (name == "rtcp-fb" && pt_text == "*") {
    for (auto& c : m.codecs) {
      if (c.feedback.size() < kMaxFeedback) c.feedback.emplace_back(rest);
    }
    return {};
  }
  Result<void> error;
  RtpCodec* c = codec_of(m, pt_text, name, error);
  if (!error) return error;
  if (!c) return {};
  if (name == "fmtp") {
    c->fmtp = std::string(rest);
  } else if (c->feedback.size() < kMaxFeedback) {
    c->feedback.emplace_back(rest);
  }
  return {};
}

Result<void> Parser::media_attribute(MediaSection& m, std::string_view name, std::string_view value) {
  if (name == "mid") {
    // A token (RFC 8843 15): it is written back into the answer's a=group:BUNDLE line.
    if (value.empty() || value.size() > kMaxMid || value.find(' ') != std::string_view::npos) {
      return fail("a=mid:" + quoted(value) + " is not a token of 1.." + std::to_string(kMaxMid) + " characters");
    }
    for (const auto& other : sdp_.media) {
      if (other.mid == value) return fail("a=mid:" + quoted(value) + " names two sections");
    }
    m.mid = std::string(value);
  } else if (name == "rtcp-mux") {
    m.rtcp_mux = true;
  } else if (name == "rtcp-rsize") {
    m.rtcp_rsize = true;
  } else if (name == "bundle-only") {
    m.bundle_only = true;
  } else if (name == "end-of-candidates") {
    m.end_of_candidates = true;
  } else if (name == "msid") {
    m.msid = std::string(value);
  } else if (name == "candidate") {
    if (m.candidates.size() == kMaxCandidates) {
      return limit("more than " + std::to_string(kMaxCandidates) + " candidates in a section");
    }
    m.candidates.emplace_back(value);
  } else if (name == "extmap") {
    std::string_view rest = value;
    std::string_view id = take(rest, ' ');
    auto n = number<uint16_t>(id.substr(0, id.find('/')));  // "2/recvonly": a direction we ignore
    if (!n || *n == 0 || *n > 255) return fail("a=extmap:" + quoted(value) + ": id is not 1..255");
    if (m.extmaps.size() < kMaxExtmaps) m.extmaps.push_back(Extmap{*n, std::string(take(rest, ' '))});
  } else if (name == "ssrc" || name == "ssrc-group") {
    if (m.ssrcs.size() + m.ssrc_groups.size() == kMaxSsrcLines) {
      return limit("more than " + std::to_string(kMaxSsrcLines) + " ssrc lines in a section");
    }
    std::string_view rest = value;
    std::string_view first = take(rest, ' ');
    if (name == "ssrc") {
      auto ssrc = number<uint32_t>(first);
      if (!ssrc) return fail("a=ssrc:" + quoted(value) + ": not a 32-bit number");
      m.ssrcs.push_back(SsrcAttribute{*ssrc, std::string(rest)});
    } else {
      SsrcGroup g{std::string(first), {}};
      while (!rest.empty()) {
        auto ssrc = number<uint32_t>(take(rest, ' '));
        if (!ssrc || g.ssrcs.size() == 8) return fail("a=ssrc-group:" + quoted(value) + ": not 'semantics ssrc...'");
        g.ssrcs.push_back(*ssrc);
      }
      m.ssrc_groups.push_back(std::move(g));
    }
  } else if (name == "rtpmap" || name == "fmtp" || name == "rtcp-fb") {
    return rtp_attribute(m, name, value);
  }
  return {};
}

Result<void> Parser::attribute(std::string_view name, std::string_view value, bool has_value) {
  MediaSection* m = sdp_.media.empty() ? nullptr : &sdp_.media.back();
  auto direction = [&](Direction d) {
    if (m) {
      m->direction = d;
      direction_set_.back() = true;
    } else {
      defaults_.direction = d;
    }
  };
  if (name == "sendrecv") {
    direction(Direction::SendRecv);
  } else if (name == "sendonly") {
    direction(Direction::SendOnly);
  } else if (name == "recvonly") {
    direction(Direction::RecvOnly);
  } else if (name == "inactive") {
    direction(Direction::Inactive);
  } else if (name == "ice-ufrag" || name == "ice-pwd") {
    // RFC 8839 5.4: 4-256 and 22-256 characters; shorter ones are kept (the server checks what it
    // needs), longer ones refused.
    if (!has_value || value.empty() || value.size() > 256)
      return fail("a=" + std::string(name) + " of " + std::to_string(value.size()) + " characters");
    std::string& field =
        name == "ice-ufrag" ? (m ? m->ice_ufrag : defaults_.ice_ufrag) : (m ? m->ice_pwd : defaults_.ice_pwd);
    field = std::string(value);
  } else if (name == "fingerprint") {
    std::string_view rest = value;
    std::string_view algorithm = take(rest, ' ');
    if (algorithm == "sha-256" || algorithm == "SHA-256") {
      auto fp = sha256_fingerprint(rest);
      if (!fp) return fail("a=fingerprint:sha-256 is not 32 hex bytes separated by ':'");
      (m ? m->fingerprint_sha256 : defaults_.fingerprint) = std::move(*fp);
    }
  } else if (name == "setup") {
    SetupRole role = value == "actpass"    ? SetupRole::ActPass
                     : value == "active"   ? SetupRole::Active
                     : value == "passive"  ? SetupRole::Passive
                     : value == "holdconn" ? SetupRole::HoldConn
                                           : SetupRole::Unset;
    if (role == SetupRole::Unset)
      return fail("a=setup:" + quoted(value) + ": not actpass, active, passive or holdconn");
    (m ? m->setup : defaults_.setup) = role;
  } else if (!m) {
    if (name == "group" && value.starts_with("BUNDLE") && sdp_.bundle_mids.empty()) {
      std::string_view rest = value.substr(6);
      while (!rest.empty()) {
        std::string_view mid = take(rest, ' ');
        if (!mid.empty()) sdp_.bundle_mids.emplace_back(mid);
        if (sdp_.bundle_mids.size() > kMaxMediaSections) return limit("a BUNDLE group of more than 16 mids");
      }
    } else if (name == "ice-lite") {
      sdp_.ice_lite = true;
    }
  } else {
    return media_attribute(*m, name, value);
  }
  return {};
}

Result<SessionDescription> Parser::run(std::string_view text) {
  if (text.size() > kMaxSdpSize) {
    return Error(Errc::LimitExceeded,
                 "sdp: " + std::to_string(text.size()) + " bytes (at most " + std::to_string(kMaxSdpSize) + ")");
  }
  bool seen_version = false;
  while (!text.empty()) {
    std::string_view line = take(text, '\n');
    ++line_;
    if (line_ > kMaxSdpLines)
      return Error(Errc::LimitExceeded, "sdp: more than " + std::to_string(kMaxSdpLines) + " lines");
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    // Control characters would end up in the answer, which echoes some values (fmtp, rtpmap).
    for (char c : line) {
      if ((static_cast<unsigned char>(c) < 0x20 && c != '\t') || c == 0x7F) return fail("a control character");
    }
    if (line.size() < 2 || line[1] != '=' || line[0] < 'a' || line[0] > 'z') {
      return fail("'" + quoted(line) + "' is not <letter>=<value>");
    }
    const char type = line[0];
    const std::string_view value = line.substr(2);
    if (!seen_version) {
      if (type != 'v' || value != "0") return fail("an SDP starts with v=0");
      seen_version = true;
      continue;
    }
    if (type == 'o') {
      sdp_.origin = std::string(value);
    } else if (type == 'm') {
      auto ok = media_line(value);
      if (!ok) return std::move(ok).error();
    } else if (type == 'a') {
      const size_t colon = value.find(':');
      auto ok = attribute(value.substr(0, colon), colon == std::string_view::npos ? "" : value.substr(colon + 1),
                          colon != std::string_view::npos);
      if (!ok) return std::move(ok).error();
    }
  }
  if (!seen_version) return Error(Errc::Malformed, "sdp: empty");
  for (size_t i = 0; i < sdp_.media.size(); ++i) {
    MediaSection& m = sdp_.media[i];
    if (m.ice_ufrag.empty()) m.ice_ufrag = defaults_.ice_ufrag;
    if (m.ice_pwd.empty()) m.ice_pwd = defaults_.ice_pwd;
    if (m.fingerprint_sha256.empty()) m.fingerprint_sha256 = defaults_.fingerprint;
    if (m.setup == SetupRole::Unset) m.setup = defaults_.setup;
    if (!direction_set_[i] && defaults_.direction) m.direction = *defaults_.direction;
    // Payload types without a=rtpmap (static ones such as 0 for PCMU) name no codec we use.
    std::erase_if(m.codecs, [](const RtpCodec& c) { return c.name.empty(); });
  }
  return std::move(sdp_);
}

}  // namespace

std::string_view direction_name(Direction d) {
  switch (d) {
    case Direction::SendRecv: return "sendrecv";
    case Direction::SendOnly: return "sendonly";
    case Direction::RecvOnly: return "recvonly";
    case Direction::Inactive: return "inactive";
  }
  return "sendrecv";
}

const RtpCodec* MediaSection::codec(uint8_t payload_type) const {
  for (const auto& c : codecs) {
    if (c.payload_type == payload_type) return &c;
  }
  return nullptr;
}

const MediaSection* SessionDescription::section(std::string_view mid) const {
  for (const auto& m : media) {
    if (m.mid == mid) return &m;
  }
  return nullptr;
}

Result<SessionDescription> parse_sdp(std::string_view text) { return Parser().run(text); }

}  // namespace sluice::protocol::webrtc
