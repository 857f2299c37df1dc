#include "bench/load/whep_sdp.hpp"

#include <openssl/rand.h>
#include <strings.h>
#include <uv.h>

#include <charconv>
#include <sstream>
#include <vector>

#include "protocol/webrtc/sdp_description.hpp"

namespace sluice::bench {

namespace pw = protocol::webrtc;

namespace {

constexpr uint8_t kH264 = 102;  // Chromium's payload types for these codecs
constexpr uint8_t kOpus = 111;

std::string transport_lines(const WhepOfferParams& p, const char* mid) {
  return "c=IN IP4 0.0.0.0\r\na=rtcp:9 IN IP4 0.0.0.0\r\na=ice-ufrag:" + p.ice_ufrag + "\r\na=ice-pwd:" + p.ice_pwd +
         "\r\na=ice-options:trickle\r\na=fingerprint:sha-256 " + p.fingerprint + "\r\na=setup:actpass\r\na=mid:" + mid +
         "\r\na=recvonly\r\na=rtcp-mux\r\n";
}

// "foundation component transport priority address port typ type ...": the address of a UDP
// candidate, or false.
bool read_candidate(const std::string& value, sockaddr_storage& out, std::string& text) {
  std::istringstream in(value);
  std::string foundation, component, transport, priority, address;
  unsigned port = 0;
  if (!(in >> foundation >> component >> transport >> priority >> address >> port)) return false;
  if (strcasecmp(transport.c_str(), "udp") != 0 || component != "1" || port == 0 || port > 65535) return false;
  out = sockaddr_storage{};
  const bool v6 = address.find(':') != std::string::npos;
  const int rc = v6 ? uv_ip6_addr(address.c_str(), static_cast<int>(port), reinterpret_cast<sockaddr_in6*>(&out))
                    : uv_ip4_addr(address.c_str(), static_cast<int>(port), reinterpret_cast<sockaddr_in*>(&out));
  if (rc != 0) return false;
  text = address + " " + std::to_string(port);
  return true;
}

}  // namespace

std::string random_ice_token(size_t length) {
  static constexpr char kChars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+/";
  std::vector<uint8_t> bytes(length);
  RAND_bytes(bytes.data(), static_cast<int>(length));
  std::string out(length, 'a');
  for (size_t i = 0; i < length; ++i) out[i] = kChars[bytes[i] % 64];
  return out;
}

std::string make_whep_offer(const WhepOfferParams& p) {
  const std::string video = std::to_string(kH264), audio = std::to_string(kOpus);
  std::string sdp = "v=0\r\no=- " + std::to_string(p.session_id) +
                    " 2 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\na=group:BUNDLE 0 1\r\na=msid-semantic: WMS\r\n";
  sdp += "m=video 9 UDP/TLS/RTP/SAVPF " + video + "\r\n" + transport_lines(p, "0") + "a=rtcp-rsize\r\n";
  sdp += "a=rtpmap:" + video + " H264/90000\r\na=rtcp-fb:" + video + " nack\r\na=rtcp-fb:" + video + " nack pli\r\n";
  sdp += "a=fmtp:" + video + " level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=42e01f\r\n";
  sdp += "m=audio 9 UDP/TLS/RTP/SAVPF " + audio + "\r\n" + transport_lines(p, "1");
  sdp += "a=rtpmap:" + audio + " opus/48000/2\r\na=fmtp:" + audio + " minptime=10;useinbandfec=1\r\n";
  return sdp;
}

Result<WhepAnswer> parse_whep_answer(std::string_view sdp) {
  auto parsed = pw::parse_sdp(sdp);
  if (!parsed) return Error(Errc::Malformed, "answer: " + parsed.error().message());
  WhepAnswer a;
  bool have_candidate = false;
  for (const pw::MediaSection& m : parsed->media) {
    if (m.port == 0 || m.formats.empty()) continue;  // refused
    if (a.ice_ufrag.empty()) {
      a.ice_ufrag = m.ice_ufrag;
      a.ice_pwd = m.ice_pwd;
      a.fingerprint = m.fingerprint_sha256;
    }
    if (m.setup == pw::SetupRole::Active)
      return Error(Errc::Malformed, "answer: a=setup:active (we are no DTLS server)");
    for (const std::string& c : m.candidates) {
      if (!have_candidate) have_candidate = read_candidate(c, a.candidate, a.candidate_text);
    }
    unsigned pt = 0;
    const std::string& f = m.formats.front();
    if (std::from_chars(f.data(), f.data() + f.size(), pt).ec != std::errc() || pt > 127) continue;
    const uint32_t ssrc = m.ssrcs.empty() ? 0 : m.ssrcs.front().ssrc;
    if (m.kind == "video") {
      a.video_pt = static_cast<uint8_t>(pt);
      a.video_ssrc = ssrc;
    } else if (m.kind == "audio") {
      a.audio_pt = static_cast<uint8_t>(pt);
      a.audio_ssrc = ssrc;
    }
  }
  if (a.ice_ufrag.empty() || a.ice_pwd.empty())
    return Error(Errc::Malformed, "answer: no accepted section with ICE credentials");
  if (a.fingerprint.empty()) return Error(Errc::Malformed, "answer: no a=fingerprint:sha-256");
  if (!have_candidate) return Error(Errc::Malformed, "answer: no UDP candidate");
  if (a.video_pt == 0) return Error(Errc::Malformed, "answer: the video section was refused");
  return a;
}

}  // namespace sluice::bench
