// server/webrtc/whip_receiver: a WHIP publisher's video with a lost packet. The gap is asked for
// (NACK) about 5 ms after it shows and again 50 ms later; an RTX retransmission restores the
// packet and the keyframe goes out whole, no keyframe asked; unrepaired, the packets behind the
// gap wait 150 ms, then the frame is lost and a keyframe is wanted. The receiver report counts
// the loss (and takes it back when the retransmission comes); padding probes on RTX are ignored.
#include "server/webrtc/whip_receiver.hpp"

#include <doctest/doctest.h>

#include <vector>

#include "media/codec/config_record.hpp"
#include "media/rtp/h264_packetizer.hpp"
#include "media/rtp/rtp_packet.hpp"
#include "protocol/webrtc/rtcp.hpp"
#include "unit/test_bytes.hpp"

using namespace sluice;
using namespace sluice::media::rtp;
using sluice::server::WhipReceiver;
using sluice::test::Bytes;
using sluice::test::hex;

namespace {

constexpr uint8_t kVideoPt = 96, kRtxPt = 97, kAudioPt = 111;
constexpr uint32_t kSsrc = 0x1234, kRtxSsrc = 0x5678;

Bytes avc_frame(bool key, size_t size) {
  Bytes n(size);
  n[0] = key ? 0x65 : 0x41;
  for (size_t i = 1; i < size; ++i) n[i] = static_cast<uint8_t>(i * 7);
  Bytes b = {static_cast<uint8_t>(key ? 0x17 : 0x27), 1, 0, 0, 0};
  const auto len = sluice::test::be32(n.size());
  b.insert(b.end(), len.begin(), len.end());
  b.insert(b.end(), n.begin(), n.end());
  return b;
}

// A keyframe (SPS/PPS STAP-A and 4 FU-A fragments) and an inter frame, as RTP from `seq` on.
std::vector<Bytes> stream(uint16_t seq) {
  H264Packetizer p(1200);
  auto record = media::avc_decoder_config({hex("67 42 c0 1f 8c 8d 40 50 17 fc b8 08 80 00 00 03 00 80 00 00 1e 07 8c")},
                                          {hex("68 ce 3c 80")});
  REQUIRE(record.has_value());
  Bytes header = hex("17 00 00 00 00");
  header.insert(header.end(), record->begin(), record->end());
  PacketizedFrame f;
  (void)p.packetize(header, 0, f);
  std::vector<Bytes> out;
  for (auto [body, ms] : {std::pair{avc_frame(true, 4000), 0u}, std::pair{avc_frame(false, 300), 40u}}) {
    REQUIRE(p.packetize(body, ms, f));
    for (size_t i = 0; i < f.payloads.size(); ++i) {
      Bytes packet(kRtpFixedHeaderSize);
      write_fixed_header(packet.data(), i + 1 == f.payloads.size(), kVideoPt, seq++, f.timestamp, kSsrc);
      packet.insert(packet.end(), f.payloads[i].span().begin(), f.payloads[i].span().end());
      out.push_back(std::move(packet));
    }
  }
  return out;
}

Bytes as_rtx(const Bytes& original, uint16_t rtx_seq) {
  Bytes p(kRtpFixedHeaderSize);
  write_fixed_header(p.data(), (original[1] & 0x80) != 0, kRtxPt, rtx_seq, 0, kRtxSsrc);
  p.push_back(original[2]);  // the original sequence number
  p.push_back(original[3]);
  p.insert(p.end(), original.begin() + kRtpFixedHeaderSize, original.end());
  return p;
}

struct Receiver {
  std::vector<std::pair<uint8_t, size_t>> frames;  // type, size
  WhipReceiver r{WhipReceiver::PayloadTypes{kVideoPt, kRtxPt, kAudioPt},
                 [this](uint8_t type, uint32_t, Slice body) { frames.emplace_back(type, body.size()); }};
  std::vector<uint16_t> nacks(uint64_t now) {
    std::vector<uint16_t> out;
    r.nacks_due(now, out);
    return out;
  }
  protocol::webrtc::ReportBlock report(uint64_t now) {
    std::vector<uint8_t> rr;
    r.write_receiver_report(0x99, now, rr);
    auto parsed = protocol::webrtc::parse_rtcp(rr);
    REQUIRE(parsed.ok());
    REQUIRE(parsed->receiver_reports.size() == 1);
    REQUIRE(parsed->receiver_reports[0].blocks.size() == 1);
    return parsed->receiver_reports[0].blocks[0];
  }
};

}  // namespace

TEST_CASE("a lost packet is NACKed, comes back as RTX, and the keyframe goes out whole") {
  const std::vector<Bytes> packets = stream(65533);  // across the wrap
  REQUIRE(packets.size() == 6);                      // STAP-A + 4 FU-A, then the inter frame
  Receiver rx;
  const size_t lost = 2;  // the second FU-A fragment
  for (size_t i = 0; i < packets.size(); ++i) {
    if (i != lost) rx.r.on_rtp(packets[i], 1000 + i);
  }
  CHECK(rx.frames.empty());                // the keyframe (and its sequence header) waits for its piece
  CHECK(rx.r.last_keyframe_ms() == 1000);  // video began: the 2-s keyframe clock starts there
  CHECK(rx.nacks(1003).empty());
  const uint16_t missing = static_cast<uint16_t>(65533 + lost);
  CHECK(rx.nacks(1009) == std::vector<uint16_t>{missing});
  CHECK(rx.nacks(1030).empty());
  CHECK(rx.nacks(1060) == std::vector<uint16_t>{missing});  // the second try
  CHECK(rx.report(1060).cumulative_lost == 1);
  // A padding probe on the RTX payload type restores nothing.
  Bytes probe = hex("a0 61 00 01 00 00 00 00 00 00 56 78 00 00 00 04");
  rx.r.on_rtp(probe, 1061);
  CHECK(rx.frames.empty());
  rx.r.on_rtp(as_rtx(packets[lost], 1), 1062);
  REQUIRE(rx.frames.size() == 3);  // the sequence header, the keyframe and the inter frame
  CHECK(rx.frames[1].first == 9);
  CHECK(rx.frames[1].second > 4000);
  CHECK(rx.r.rtx_packets() == 1);
  CHECK(rx.r.last_keyframe_ms() == 1062);  // the keyframe went to the hub with its repair
  CHECK(rx.r.nack_stats().recovered == 1);
  CHECK_FALSE(rx.r.keyframe_wanted());
  CHECK(rx.nacks(1200).empty());
  CHECK(rx.report(2060).cumulative_lost == 0);
  // A packet sent again over RTX as a bandwidth probe: a copy, not counted as received twice.
  rx.r.on_rtp(as_rtx(packets[0], 2), 2070);
  CHECK(rx.r.rtx_packets() == 2);
  CHECK(rx.r.lost_packets() == 0);
  CHECK(rx.frames.size() == 3);
}

TEST_CASE("an unrepaired loss: the packets behind wait 150 ms, then the frame is lost and a keyframe wanted") {
  const std::vector<Bytes> packets = stream(100);
  Receiver rx;
  for (size_t i = 0; i < packets.size(); ++i) {
    if (i != 1) rx.r.on_rtp(packets[i], 1000);
  }
  rx.r.poll(1149);
  CHECK_FALSE(rx.r.keyframe_wanted());
  rx.r.poll(1150);
  // The damaged keyframe is dropped, and the inter frame with it (nothing to decode it from).
  CHECK(rx.frames.empty());
  CHECK(rx.r.keyframe_wanted());
  CHECK(rx.r.lost_packets() == 1);
}
