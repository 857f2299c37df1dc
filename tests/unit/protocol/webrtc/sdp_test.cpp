// SDP (protocol/webrtc/sdp_description.hpp, sdp_codecs.hpp, sdp_answer.hpp): real Chromium offers
// and the forms of Firefox, OBS and GStreamer parsed; codecs chosen; answers for WHIP and WHEP
// checked line by line; and what is refused, with its message.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "protocol/webrtc/sdp_answer.hpp"
#include "protocol/webrtc/sdp_codecs.hpp"
#include "protocol/webrtc/sdp_description.hpp"
#include "unit/protocol/webrtc/sdp_offers.hpp"

using namespace sluice;
using namespace sluice::protocol;
using namespace sluice::protocol::webrtc;
using sluice::test::crlf;

namespace {

SessionDescription parsed(std::string_view lf_text) {
  auto sdp = parse_sdp(crlf(lf_text));
  REQUIRE_MESSAGE(sdp.ok(), sdp.error().message());
  return std::move(sdp).value();
}

std::vector<std::string> lines(std::string_view text) {
  std::vector<std::string> out;
  while (!text.empty()) {
    const size_t end = text.find("\r\n");
    REQUIRE(end != std::string_view::npos);  // every line ends with CRLF
    out.emplace_back(text.substr(0, end));
    text.remove_prefix(end + 2);
  }
  return out;
}

void check_lines(std::string_view got, std::string_view want_lf) {
  const auto g = lines(got), w = lines(crlf(want_lf));
  for (size_t i = 0; i < std::max(g.size(), w.size()); ++i) {
    CAPTURE(i);
    CHECK((i < g.size() ? g[i] : "<none>") == (i < w.size() ? w[i] : "<none>"));
  }
}

AnswerConfig server_config(WebrtcRole role) {
  AnswerConfig c;
  c.role = role;
  c.ice_ufrag = "sLu1";
  c.ice_pwd = "sluice-ice-password-24ch";
  c.fingerprint_sha256 =
      "01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD:EF";
  c.addresses = {*parse_ipv4("192.0.2.10"), *parse_ipv6("2001:db8::10")};
  c.port = 8189;
  c.session_id = 42;
  c.video = {1111, 2222, "video0"};
  c.audio = {3333, 0, "audio0"};
  return c;
}

std::string why(std::string_view lf_text) {
  auto sdp = parse_sdp(crlf(lf_text));
  REQUIRE_FALSE(sdp.ok());
  return sdp.error().message();
}

constexpr std::string_view kMinimal =
    "v=0\no=- 1 2 IN IP4 127.0.0.1\ns=-\nt=0 0\na=group:BUNDLE 0\n"
    "a=ice-ufrag:abcd\na=ice-pwd:abcdefghijklmnopqrstuv\n"
    "a=fingerprint:sha-256 "
    "00:11:22:33:44:55:66:77:88:99:AA:BB:CC:DD:EE:FF:00:11:22:33:44:55:66:77:88:99:AA:BB:CC:DD:EE:FF\n"
    "m=audio 9 UDP/TLS/RTP/SAVPF 111\nc=IN IP4 0.0.0.0\na=mid:0\na=sendonly\na=rtcp-mux\n"
    "a=rtpmap:111 opus/48000/2\n";

}  // namespace

TEST_CASE("Chromium's WHIP offer: what the parser keeps") {
  const SessionDescription sdp = parsed(test::kChromiumWhip);
  CHECK(sdp.bundle_mids == std::vector<std::string>{"0", "1"});
  CHECK_FALSE(sdp.ice_lite);
  REQUIRE(sdp.media.size() == 2);
  const MediaSection& audio = sdp.media[0];
  CHECK(audio.kind == "audio");
  CHECK(audio.mid == "0");
  CHECK(audio.port == 9);
  CHECK(audio.protocol == "UDP/TLS/RTP/SAVPF");
  CHECK(audio.direction == Direction::SendOnly);
  CHECK(audio.rtcp_mux);
  CHECK(audio.rtcp_rsize);
  CHECK(audio.setup == SetupRole::ActPass);
  CHECK(audio.ice_ufrag == "hg14");
  CHECK(audio.ice_pwd == "uYRq1c8XqDmsjA2KAUw1m/rq");
  CHECK(audio.fingerprint_sha256.substr(0, 11) == "75:08:0B:5C");
  CHECK(audio.formats.size() == 8);
  REQUIRE(audio.codecs.size() == 8);
  CHECK(audio.codecs[0].name == "opus");
  CHECK(audio.codecs[0].channels == 2);
  CHECK(audio.codecs[0].fmtp == "minptime=10;useinbandfec=1");
  CHECK(audio.codecs[0].feedback == std::vector<std::string>{"transport-cc"});
  CHECK(audio.extmaps.size() == 4);
  CHECK(audio.msid == "13662d50-44af-479d-ae82-b1012c8f443b 4d13493d-9a18-4612-974a-7585b6c1817a");
  REQUIRE(audio.ssrcs.size() == 2);
  CHECK(audio.ssrcs[0].ssrc == 3757216029u);
  CHECK(audio.ssrcs[0].attribute == "cname:Rgr/Yxcmqr4p05Lp");
  const MediaSection& video = sdp.media[1];
  CHECK(video.kind == "video");
  CHECK(video.formats.size() == 23);
  CHECK(video.codecs.size() == 23);
  REQUIRE(video.codec(102));
  CHECK(video.codec(102)->feedback.size() == 5);
  REQUIRE(video.ssrc_groups.size() == 1);
  CHECK(video.ssrc_groups[0].semantics == "FID");
  CHECK(video.ssrc_groups[0].ssrcs == std::vector<uint32_t>{1116299984, 1819566089});
}

TEST_CASE("Codec choice: constrained baseline first, then the fallbacks") {
  const SessionDescription whip = parsed(test::kChromiumWhip);
  auto video = choose_video_codec(whip.media[1], {});
  REQUIRE(video);
  // 102 (42001f) comes first in Chromium's list, but 108 is constrained baseline (42e01f).
  CHECK(video->codec.payload_type == 108);
  CHECK(video->rtx_payload_type == 109);
  CHECK(video->h264_profile == "42e01f");
  CHECK_FALSE(video->fallback);
  // Packetization mode 0 never: 104 and 114 are skipped whatever the hint.
  auto main_profile = choose_video_codec(whip.media[1], {false, "4d0032"});
  REQUIRE(main_profile);
  CHECK(main_profile->codec.payload_type == 116);
  CHECK(main_profile->rtx_payload_type == 117);
  CHECK_FALSE(main_profile->fallback);
  // No HEVC in this offer: asking for it gives H.264.
  CHECK(choose_video_codec(whip.media[1], {true, {}})->codec.payload_type == 108);
  auto audio = choose_audio_codec(whip.media[0]);
  REQUIRE(audio);
  CHECK(audio->codec.payload_type == 111);
  CHECK_FALSE(audio->rtx_payload_type);

  // Only High profile with mode 1: taken, and reported as a fallback.
  MediaSection high;
  high.codecs = {RtpCodec{100, "H264", 90000, 0, "profile-level-id=640c1f;packetization-mode=1", {}},
                 RtpCodec{101, "H264", 90000, 0, "profile-level-id=42e01f", {}},
                 RtpCodec{102, "rtx", 90000, 0, "apt=100", {}}};
  auto fallback = choose_video_codec(high, {});
  REQUIRE(fallback);
  CHECK(fallback->codec.payload_type == 100);
  CHECK(fallback->fallback);
  CHECK(fallback->h264_profile == "640c1f");
  CHECK(fallback->rtx_payload_type == 102);
  // HEVC when offered and wanted.
  high.codecs.push_back(RtpCodec{49, "H265", 90000, 0, "level-id=93;profile-id=1;tier-flag=0;tx-mode=SRST", {}});
  CHECK(choose_video_codec(high, {true, {}})->codec.payload_type == 49);
  CHECK(choose_video_codec(high, {false, {}})->codec.payload_type == 100);
  CHECK(fmtp_parameter("level-asymmetry-allowed=1; packetization-mode=1", "packetization-mode") == "1");
  CHECK_FALSE(fmtp_parameter("packetization-mode=1", "profile-level-id"));
}

TEST_CASE("WHIP answer to Chromium: line by line") {
  auto answer = build_answer(parsed(test::kChromiumWhip), server_config(WebrtcRole::Whip));
  REQUIRE_MESSAGE(answer.ok(), answer.error().message());
  check_lines(answer->sdp, R"(v=0
o=- 42 2 IN IP4 127.0.0.1
s=-
t=0 0
a=ice-lite
a=group:BUNDLE 0 1
m=audio 8189 UDP/TLS/RTP/SAVPF 111
c=IN IP4 192.0.2.10
a=mid:0
a=ice-ufrag:sLu1
a=ice-pwd:sluice-ice-password-24ch
a=fingerprint:sha-256 01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD:EF
a=setup:passive
a=recvonly
a=rtcp-mux
a=rtcp-rsize
a=extmap:2 http://www.webrtc.org/experiments/rtp-hdrext/abs-send-time
a=extmap:4 urn:ietf:params:rtp-hdrext:sdes:mid
a=rtpmap:111 opus/48000/2
a=fmtp:111 minptime=10;useinbandfec=1
a=candidate:1 1 udp 2130706431 192.0.2.10 8189 typ host
a=candidate:2 1 udp 2130706175 2001:db8::10 8189 typ host
a=end-of-candidates
m=video 8189 UDP/TLS/RTP/SAVPF 108 109
c=IN IP4 192.0.2.10
a=mid:1
a=ice-ufrag:sLu1
a=ice-pwd:sluice-ice-password-24ch
a=fingerprint:sha-256 01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD:EF
a=setup:passive
a=recvonly
a=rtcp-mux
a=rtcp-rsize
a=extmap:2 http://www.webrtc.org/experiments/rtp-hdrext/abs-send-time
a=extmap:4 urn:ietf:params:rtp-hdrext:sdes:mid
a=rtpmap:108 H264/90000
a=rtcp-fb:108 nack
a=rtcp-fb:108 nack pli
a=rtcp-fb:108 ccm fir
a=rtcp-fb:108 goog-remb
a=fmtp:108 level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=42e01f
a=rtpmap:109 rtx/90000
a=fmtp:109 apt=108
a=candidate:1 1 udp 2130706431 192.0.2.10 8189 typ host
a=candidate:2 1 udp 2130706175 2001:db8::10 8189 typ host
a=end-of-candidates
)");
  REQUIRE(answer->sections.size() == 2);
  CHECK(answer->sections[1].codec->h264_profile == "42e01f");
  // The answer is itself an SDP the parser takes, with what was decided.
  auto again = parse_sdp(answer->sdp);
  REQUIRE(again.ok());
  CHECK(again->ice_lite);
  CHECK(again->media[1].direction == Direction::RecvOnly);
  CHECK(again->media[1].setup == SetupRole::Passive);
  CHECK(again->media[1].candidates.size() == 2);
  CHECK(again->media[1].end_of_candidates);
}

TEST_CASE("WHEP answer to Chromium: sendonly with our ssrc and msid, transport-cc when asked") {
  AnswerConfig config = server_config(WebrtcRole::Whep);
  config.feedback = CongestionFeedback::TransportCc;
  config.addresses.resize(1);
  auto answer = build_answer(parsed(test::kChromiumWhep), config);
  REQUIRE_MESSAGE(answer.ok(), answer.error().message());
  check_lines(answer->sdp, R"(v=0
o=- 42 2 IN IP4 127.0.0.1
s=-
t=0 0
a=ice-lite
a=group:BUNDLE 0 1
m=video 8189 UDP/TLS/RTP/SAVPF 108 109
c=IN IP4 192.0.2.10
a=mid:0
a=ice-ufrag:sLu1
a=ice-pwd:sluice-ice-password-24ch
a=fingerprint:sha-256 01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD:EF
a=setup:passive
a=sendonly
a=rtcp-mux
a=rtcp-rsize
a=extmap:4 http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01
a=extmap:9 urn:ietf:params:rtp-hdrext:sdes:mid
a=rtpmap:108 H264/90000
a=rtcp-fb:108 nack
a=rtcp-fb:108 nack pli
a=rtcp-fb:108 ccm fir
a=rtcp-fb:108 transport-cc
a=fmtp:108 level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=42e01f
a=rtpmap:109 rtx/90000
a=fmtp:109 apt=108
a=msid:sluice video0
a=ssrc-group:FID 1111 2222
a=ssrc:1111 cname:sluice
a=ssrc:1111 msid:sluice video0
a=ssrc:2222 cname:sluice
a=ssrc:2222 msid:sluice video0
a=candidate:1 1 udp 2130706431 192.0.2.10 8189 typ host
a=end-of-candidates
m=audio 8189 UDP/TLS/RTP/SAVPF 111
c=IN IP4 192.0.2.10
a=mid:1
a=ice-ufrag:sLu1
a=ice-pwd:sluice-ice-password-24ch
a=fingerprint:sha-256 01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD:EF
a=setup:passive
a=sendonly
a=rtcp-mux
a=rtcp-rsize
a=extmap:4 http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01
a=extmap:9 urn:ietf:params:rtp-hdrext:sdes:mid
a=rtpmap:111 opus/48000/2
a=rtcp-fb:111 transport-cc
a=fmtp:111 minptime=10;useinbandfec=1
a=msid:sluice audio0
a=ssrc:3333 cname:sluice
a=ssrc:3333 msid:sluice audio0
a=candidate:1 1 udp 2130706431 192.0.2.10 8189 typ host
a=end-of-candidates
)");
}

TEST_CASE("The other clients' offers: OBS, GStreamer, Firefox") {
  const SessionDescription obs = parsed(test::kObsWhip);
  // Session-level credentials and fingerprint apply to both sections.
  CHECK(obs.media[0].ice_ufrag == "Xp2o");
  CHECK(obs.media[1].ice_pwd == "5kX0a9p3DqLz2vYQm8wTnB");
  CHECK(obs.media[1].fingerprint_sha256.substr(0, 5) == "6E:0A");
  CHECK(obs.media[0].setup == SetupRole::ActPass);
  CHECK(obs.media[0].candidates.size() == 2);
  auto obs_answer = build_answer(obs, server_config(WebrtcRole::Whip));
  REQUIRE(obs_answer.ok());
  CHECK(obs_answer->sections[0].accepted);
  CHECK(obs_answer->sections[1].accepted);
  CHECK(obs_answer->sections[1].codec->codec.payload_type == 96);

  // webrtcbin: sendrecv, max-bundle (the audio section has port 0 and a=bundle-only, still taken).
  const SessionDescription gst = parsed(test::kGstreamerWhip);
  CHECK(gst.media[1].port == 0);
  CHECK(gst.media[1].bundle_only);
  auto gst_answer = build_answer(gst, server_config(WebrtcRole::Whip));
  REQUIRE(gst_answer.ok());
  CHECK(gst_answer->sections[0].accepted);
  CHECK(gst_answer->sections[0].codec->h264_profile == "42c01f");
  CHECK(gst_answer->sections[1].accepted);
  CHECK(gst_answer->sections[1].codec->codec.name == "OPUS");
  CHECK(gst_answer->sdp.find("a=group:BUNDLE video0 audio1\r\n") != std::string::npos);

  // Firefox: a=fmtp before a=rtpmap; session-level fingerprint; H.264 126 (mode 1, constrained
  // baseline) over VP8 120, which it lists first.
  const SessionDescription firefox = parsed(test::kFirefoxWhip);
  REQUIRE(firefox.media[1].codec(126));
  CHECK(firefox.media[1].codec(126)->fmtp == "profile-level-id=42e01f;level-asymmetry-allowed=1;packetization-mode=1");
  CHECK(firefox.media[0].fingerprint_sha256.substr(0, 5) == "3A:9B");
  auto ff_answer = build_answer(firefox, server_config(WebrtcRole::Whip));
  REQUIRE(ff_answer.ok());
  CHECK(ff_answer->sections[1].codec->codec.payload_type == 126);
  CHECK(ff_answer->sections[1].codec->rtx_payload_type == 127);
  CHECK(ff_answer->sections[0].codec->codec.payload_type == 109);
}

TEST_CASE("Rejected sections: port 0 with the reason, and when nothing is left") {
  // A WHIP publisher's offer played back as WHEP: nothing receives.
  auto whep_of_whip = build_answer(parsed(test::kChromiumWhip), server_config(WebrtcRole::Whep));
  REQUIRE_FALSE(whep_of_whip.ok());
  CHECK(whep_of_whip.error().message() ==
        "unsupported: sdp: nothing to accept: mid 0: a WHEP player's audio must receive, it is sendonly; mid 1: a "
        "WHEP player's video must receive, it is sendonly");

  // A data channel and a second audio section beside the audio: rejected, the rest goes on.
  std::string offer(kMinimal);
  offer.replace(offer.find("BUNDLE 0"), 8, "BUNDLE 0 1 2");
  offer += "m=application 9 UDP/DTLS/SCTP webrtc-datachannel\nc=IN IP4 0.0.0.0\na=mid:1\n";
  offer += "m=audio 9 UDP/TLS/RTP/SAVPF 111\na=mid:2\na=sendonly\na=rtcp-mux\na=rtpmap:111 opus/48000/2\n";
  auto answer = build_answer(parsed(offer), server_config(WebrtcRole::Whip));
  REQUIRE(answer.ok());
  CHECK(answer->sections[0].accepted);
  CHECK(answer->sections[1].reason == "a 'application' section (only audio and video)");
  CHECK(answer->sections[2].reason == "a second audio section");
  CHECK(answer->sdp.find("a=group:BUNDLE 0\r\n") != std::string::npos);
  CHECK(answer->sdp.find("m=application 0 UDP/DTLS/SCTP webrtc-datachannel\r\nc=IN IP4 0.0.0.0\r\na=mid:1\r\n") !=
        std::string::npos);
  CHECK(answer->sdp.find("m=audio 0 UDP/TLS/RTP/SAVPF 111\r\nc=IN IP4 0.0.0.0\r\na=mid:2\r\n") != std::string::npos);
  auto again = parse_sdp(answer->sdp);
  REQUIRE(again.ok());
  CHECK(again->media.size() == 3);

  auto refuse = [](std::string text, const AnswerConfig& config) {
    auto a = build_answer(parsed(text), config);
    REQUIRE_FALSE(a.ok());
    return a.error().message();
  };
  const AnswerConfig whip = server_config(WebrtcRole::Whip);
  std::string no_mux(kMinimal);
  no_mux.erase(no_mux.find("a=rtcp-mux\n"), 11);
  CHECK(refuse(no_mux, whip) ==
        "unsupported: sdp: nothing to accept: mid 0: no a=rtcp-mux (RTCP goes beside RTP only)");
  std::string pcmu(kMinimal);
  pcmu.replace(pcmu.find("opus/48000/2"), 12, "PCMU/8000");
  CHECK(refuse(pcmu, whip) == "unsupported: sdp: nothing to accept: mid 0: no opus/48000/2");
  std::string passive(kMinimal);
  passive += "a=setup:passive\n";
  CHECK(refuse(passive, whip) ==
        "malformed: sdp: section 1 (mid 0): a=setup:passive leaves no DTLS client (we are passive)");
  std::string no_fp(kMinimal);
  no_fp.erase(no_fp.find("a=fingerprint"), no_fp.find("m=audio") - no_fp.find("a=fingerprint"));
  CHECK(refuse(no_fp, whip) == "malformed: sdp: section 1 (mid 0): no a=fingerprint:sha-256");
  std::string no_ice(kMinimal);
  no_ice.erase(no_ice.find("a=ice-pwd"), no_ice.find("a=fingerprint") - no_ice.find("a=ice-pwd"));
  CHECK(refuse(no_ice, whip) == "malformed: sdp: section 1 (mid 0): no a=ice-ufrag or a=ice-pwd");
  std::string outside(kMinimal);
  outside.replace(outside.find("BUNDLE 0"), 8, "BUNDLE 7");
  CHECK(refuse(outside, whip) == "unsupported: sdp: nothing to accept: mid 0: not in the BUNDLE group");
}

TEST_CASE("parse_sdp: limits and grammar, with the line") {
  CHECK(why("") == "malformed: sdp: empty");
  CHECK(why("o=- 1 1 IN IP4 0.0.0.0\n") == "malformed: sdp: line 1: an SDP starts with v=0");
  CHECK(why("v=0\nhello\n") == "malformed: sdp: line 2: 'hello' is not <letter>=<value>");
  CHECK(why("v=0\na=fmtp:96 x\x01y\n") == "malformed: sdp: line 2: a control character");
  CHECK(why("v=0\nm=video 9 UDP/TLS/RTP/SAVPF 96 abc\n") == "malformed: sdp: line 2: payload type 'abc' is not 0..127");
  CHECK(why("v=0\nm=video 9 UDP/TLS/RTP/SAVPF 128\n") == "malformed: sdp: line 2: payload type '128' is not 0..127");
  CHECK(why("v=0\nm=video 99999 UDP/TLS/RTP/SAVPF 96\n") ==
        "malformed: sdp: line 2: m=video 99999 UDP/TLS/RTP/SAVPF 96: not 'kind port protocol formats'");
  CHECK(why("v=0\nm=video 9 UDP/TLS/RTP/SAVPF 96\na=rtpmap:96 H264\n") ==
        "malformed: sdp: line 3: a=rtpmap:96 H264: not 'pt name/clock[/channels]'");
  CHECK(why("v=0\nm=video 9 UDP/TLS/RTP/SAVPF 96\na=rtpmap:96 H264/90000\na=rtpmap:96 VP8/90000\n") ==
        "malformed: sdp: line 4: a second a=rtpmap for payload type 96");
  CHECK(why("v=0\nm=video 9 UDP/TLS/RTP/SAVPF 96\na=mid:a b\n") ==
        "malformed: sdp: line 3: a=mid:a b is not a token of 1..64 characters");
  CHECK(why("v=0\nm=video 9 UDP/TLS/RTP/SAVPF 96\na=mid:0\nm=audio 9 UDP/TLS/RTP/SAVPF 111\na=mid:0\n") ==
        "malformed: sdp: line 5: a=mid:0 names two sections");
  CHECK(why("v=0\na=fingerprint:sha-256 00:11\n") ==
        "malformed: sdp: line 2: a=fingerprint:sha-256 is not 32 hex bytes separated by ':'");
  CHECK(why("v=0\na=setup:maybe\n") ==
        "malformed: sdp: line 2: a=setup:maybe: not actpass, active, passive or holdconn");
  CHECK(why("v=0\nm=video 9 UDP/TLS/RTP/SAVPF 96\na=ssrc:x cname:y\n") ==
        "malformed: sdp: line 3: a=ssrc:x cname:y: not a 32-bit number");

  std::string many = "v=0\n";
  for (int i = 0; i < 17; ++i) many += "m=audio 9 UDP/TLS/RTP/SAVPF 111\n";
  CHECK(why(many) == "limit_exceeded: sdp: more than 16 media sections");
  std::string types = "v=0\nm=video 9 UDP/TLS/RTP/SAVPF";
  for (int i = 0; i < 65; ++i) types += " " + std::to_string(i);
  CHECK(why(types + "\n") == "limit_exceeded: sdp: line 2: more than 64 payload types");
  std::string lines_over = "v=0\n";
  for (int i = 0; i < 2000; ++i) lines_over += "a=x\n";
  CHECK(why(lines_over) == "limit_exceeded: sdp: more than 2000 lines");
  CHECK(why(std::string(65537, 'a')) == "limit_exceeded: sdp: 65537 bytes (at most 65536)");
  std::string candidates = "v=0\nm=audio 9 UDP/TLS/RTP/SAVPF 111\n";
  for (int i = 0; i < 65; ++i) candidates += "a=candidate:1 1 udp 1 192.0.2.1 9 typ host\n";
  CHECK(why(candidates) == "limit_exceeded: sdp: line 67: more than 64 candidates in a section");

  // LF alone, unknown attributes and line types: taken.
  auto lenient = parse_sdp("v=0\nx=whatever\nb=AS:300\na=unknown-thing:1\n");
  CHECK(lenient.ok());
}
