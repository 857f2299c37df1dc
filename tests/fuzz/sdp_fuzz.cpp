// libFuzzer target for the SDP offer parser and the answer (protocol/webrtc/sdp_description.hpp,
// sdp_codecs.hpp, sdp_answer.hpp): the input is an offer's text, answered as WHIP and as WHEP.
// Properties: no crash or sanitizer report; a parsed offer keeps its limits (sections, payload
// types, candidates); every chosen codec is one the section offered, H.264 only with
// packetization-mode=1, its rtx payload type an rtx of it; an answer parses again, with one
// section per offered one in the same order and with the same mids, the accepted ones (exactly
// those in the answer's BUNDLE group) with our direction, a=setup:passive, our credentials and
// only the chosen payload types, the rejected ones with port 0.
#include <cctype>
#include <cstddef>
#include <cstdio>
#include <optional>
#include <cstdint>
#include <string>
#include <string_view>

#include "protocol/webrtc/sdp_answer.hpp"
#include "protocol/webrtc/sdp_codecs.hpp"
#include "protocol/webrtc/sdp_description.hpp"
#include "tests/fuzz/fuzz_input.hpp"

using namespace sluice;
using namespace sluice::protocol;
using namespace sluice::protocol::webrtc;

namespace {

void check_chosen(const MediaSection& offered, const ChosenCodec& chosen) {
  const RtpCodec* c = offered.codec(chosen.codec.payload_type);
  FUZZ_CHECK(c != nullptr);
  FUZZ_CHECK(c->name == chosen.codec.name);
  std::string name = chosen.codec.name;
  for (char& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (name == "h264") {
    FUZZ_CHECK(fmtp_parameter(c->fmtp, "packetization-mode") == std::optional<std::string_view>("1"));
  }
  if (chosen.rtx_payload_type) {
    const RtpCodec* rtx = offered.codec(*chosen.rtx_payload_type);
    FUZZ_CHECK(rtx != nullptr);
    FUZZ_CHECK(fmtp_parameter(rtx->fmtp, "apt") == std::to_string(chosen.codec.payload_type));
  }
}

void check_answer(const SessionDescription& offer, WebrtcRole role) {
  AnswerConfig config;
  config.role = role;
  config.ice_ufrag = "fzUf";
  config.ice_pwd = "fuzz-ice-password-0123456789";
  config.fingerprint_sha256 =
      "01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD:EF";
  config.addresses = {*parse_ipv4("192.0.2.10"), *parse_ipv6("2001:db8::10")};
  config.port = 8189;
  config.video = {1111, 2222, "video0"};
  config.audio = {3333, 0, "audio0"};
  auto answer = build_answer(offer, config);
  if (!answer) {
    FUZZ_CHECK(!answer.error().context.empty());
    return;
  }
  FUZZ_CHECK(answer->sections.size() == offer.media.size());
  auto again = parse_sdp(answer->sdp);
  if (!again) std::fprintf(stderr, "%s\n%s\n", answer->sdp.c_str(), again.error().message().c_str());
  FUZZ_CHECK(again.ok());
  FUZZ_CHECK(again->ice_lite);
  FUZZ_CHECK(again->media.size() == offer.media.size());
  size_t bundled = 0;
  for (size_t i = 0; i < offer.media.size(); ++i) {
    const AnswerSection& s = answer->sections[i];
    const MediaSection& a = again->media[i];
    FUZZ_CHECK(a.kind == offer.media[i].kind);
    FUZZ_CHECK(a.mid == offer.media[i].mid);
    if (!s.accepted) {
      FUZZ_CHECK(!s.reason.empty());
      FUZZ_CHECK(a.port == 0);
      continue;
    }
    ++bundled;
    FUZZ_CHECK(s.codec.has_value());
    check_chosen(offer.media[i], *s.codec);
    FUZZ_CHECK(a.port == 8189);
    FUZZ_CHECK(a.direction == (role == WebrtcRole::Whip ? Direction::RecvOnly : Direction::SendOnly));
    FUZZ_CHECK(a.setup == SetupRole::Passive);
    FUZZ_CHECK(a.ice_ufrag == config.ice_ufrag && a.ice_pwd == config.ice_pwd);
    FUZZ_CHECK(a.fingerprint_sha256 == config.fingerprint_sha256);
    FUZZ_CHECK(a.rtcp_mux);
    FUZZ_CHECK(a.candidates.size() == 2 && a.end_of_candidates);
    FUZZ_CHECK(a.formats.size() == (s.codec->rtx_payload_type ? 2u : 1u));
    FUZZ_CHECK(a.formats[0] == std::to_string(s.codec->codec.payload_type));
    FUZZ_CHECK(a.codec(s.codec->codec.payload_type) != nullptr);
    FUZZ_CHECK(again->section(a.mid) == &a);
    bool listed = false;
    for (const auto& mid : again->bundle_mids) listed = listed || mid == a.mid;
    FUZZ_CHECK(listed);
  }
  FUZZ_CHECK(bundled > 0);
  FUZZ_CHECK(again->bundle_mids.size() == bundled);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto offer = parse_sdp(text);
  if (!offer) {
    FUZZ_CHECK(offer.error().context.starts_with("sdp: "));
    return 0;
  }
  FUZZ_CHECK(offer->media.size() <= kMaxMediaSections);
  for (const auto& m : offer->media) {
    FUZZ_CHECK(m.formats.size() <= kMaxPayloadTypes && !m.formats.empty());
    FUZZ_CHECK(m.candidates.size() <= kMaxCandidates);
    FUZZ_CHECK(m.codecs.size() <= m.formats.size());
    if (auto v = choose_video_codec(m, {}); v) check_chosen(m, *v);
    if (auto v = choose_video_codec(m, {true, "64001f"}); v) check_chosen(m, *v);
    if (auto a = choose_audio_codec(m); a) check_chosen(m, *a);
  }
  check_answer(*offer, WebrtcRole::Whip);
  check_answer(*offer, WebrtcRole::Whep);
  return 0;
}
