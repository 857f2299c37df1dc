// media/rtp/h264_packetizer and h264_depacketizer: payload shapes (single NAL unit, STAP-A with
// the parameter sets before an IDR, FU-A), the round trip back to the same tag bodies across the
// sequence number wrap, and what a loss, a malformed or unknown packet does.
#include <doctest/doctest.h>

#include <vector>

#include "media/codec/config_record.hpp"
#include "media/rtp/h264_depacketizer.hpp"
#include "media/rtp/h264_nal.hpp"
#include "media/rtp/h264_packetizer.hpp"
#include "media/rtp/rtp_packet.hpp"
#include "unit/test_bytes.hpp"

using namespace sluice;
using namespace sluice::media;
using namespace sluice::media::rtp;
using sluice::test::Bytes;
using sluice::test::hex;

namespace {

const Bytes kSps = hex("67 42 c0 1f 8c 8d 40 50 17 fc b8 08 80 00 00 03 00 80 00 00 1e 07 8c 19 50");
const Bytes kPps = hex("68 ce 3c 80");

Bytes nal(uint8_t header, size_t size, uint8_t seed) {
  Bytes n(size);
  n[0] = header;
  for (size_t i = 1; i < size; ++i) n[i] = static_cast<uint8_t>(seed + i * 7);
  return n;
}

Bytes sequence_header() {
  auto record = avc_decoder_config({kSps}, {kPps});
  REQUIRE(record.has_value());
  Bytes b = hex("17 00 00 00 00");
  b.insert(b.end(), record->begin(), record->end());
  return b;
}

// A legacy AVC frame body (composition time 0) of these NAL units.
Bytes frame(bool key, const std::vector<Bytes>& nals) {
  Bytes b = {static_cast<uint8_t>(key ? 0x17 : 0x27), 1, 0, 0, 0};
  for (const auto& n : nals) {
    const auto len = sluice::test::be32(n.size());
    b.insert(b.end(), len.begin(), len.end());
    b.insert(b.end(), n.begin(), n.end());
  }
  return b;
}

struct Packet {
  Bytes bytes;
  uint16_t seq;
};

// The frame's payloads as RTP packets numbered from `seq`.
void to_packets(const PacketizedFrame& f, uint16_t& seq, std::vector<Packet>& out) {
  for (size_t i = 0; i < f.payloads.size(); ++i) {
    Bytes p(kRtpFixedHeaderSize);
    write_fixed_header(p.data(), i + 1 == f.payloads.size(), 96, seq, f.timestamp, 0x1234);
    p.insert(p.end(), f.payloads[i].span().begin(), f.payloads[i].span().end());
    out.push_back({std::move(p), seq++});
  }
}

std::vector<DepacketizedFrame> depacketize(H264Depacketizer& d, const std::vector<Packet>& packets) {
  std::vector<DepacketizedFrame> out;
  for (const auto& p : packets) {
    auto v = parse_rtp(p.bytes);
    REQUIRE(v.ok());
    d.push(*v, out);
  }
  return out;
}

}  // namespace

TEST_CASE("a keyframe: the parameter sets in a STAP-A, the IDR in FU-A fragments of nearly equal size") {
  H264Packetizer p(1200);
  PacketizedFrame f;
  CHECK_FALSE(p.packetize(sequence_header(), 0, f));
  const Bytes idr = nal(0x65, 3000, 1);
  REQUIRE(p.packetize(frame(true, {hex("09 10"), idr}), 1000, f));
  CHECK(f.keyframe);
  CHECK(f.timestamp == 90000);
  REQUIRE(f.payloads.size() == 4);
  // STAP-A: F|max NRI|24, then each set behind its size; the AUD is left out.
  const auto stap = f.payloads[0].span();
  CHECK(stap[0] == (0x60 | kNalStapA));
  CHECK(Bytes(stap.begin() + 1, stap.begin() + 3) == sluice::test::be16(kSps.size()));
  CHECK(stap.size() == 1 + 2 + kSps.size() + 2 + kPps.size());
  Bytes rebuilt = {static_cast<uint8_t>((f.payloads[1][0] & 0xE0) | (f.payloads[1][1] & 0x1F))};
  for (size_t i = 1; i < 4; ++i) {
    const auto fu = f.payloads[i].span();
    CHECK(fu.size() <= 1200);
    CHECK(fu[0] == (0x60 | kNalFuA));
    CHECK(((fu[1] & kFuStart) != 0) == (i == 1));
    CHECK(((fu[1] & kFuEnd) != 0) == (i == 3));
    CHECK((fu[1] & 0x1F) == kNalIdr);
    rebuilt.insert(rebuilt.end(), fu.begin() + 2, fu.end());
  }
  CHECK(rebuilt == idr);
  // Fragments of 1000, 1000 and 999 bytes of the unit's 2999 after its header.
  CHECK(f.payloads[1].size() == 1001 + 1);
  CHECK(f.payloads[3].size() == 999 + 2);
  // All fragments but the last of one size (the segments of one GSO datagram), the last no
  // larger: 3997 bytes after the header as 1000, 1000, 1000 and 997 (not 1000, 999, 999, 999).
  PacketizedFrame g;
  REQUIRE(p.packetize(frame(false, {nal(0x41, 3998, 2)}), 1040, g));
  REQUIRE(g.payloads.size() == 4);
  for (size_t i = 0; i < 3; ++i) CHECK(g.payloads[i].size() == 1000 + 2);
  CHECK(g.payloads[3].size() == 997 + 2);
  // One buffer for the whole frame.
  CHECK(f.payloads[0].use_count() == 4);
}

TEST_CASE("small units of a frame share a STAP-A; one alone is a single NAL unit packet") {
  H264Packetizer p(1200);
  PacketizedFrame f;
  CHECK_FALSE(p.packetize(frame(false, {nal(0x41, 100, 1)}), 0, f));  // before any sequence header
  CHECK(p.stats().dropped == 1);
  (void)p.packetize(sequence_header(), 0, f);
  REQUIRE(p.packetize(frame(false, {nal(0x06, 20, 2), nal(0x41, 500, 3), nal(0x41, 900, 4)}), 40, f));
  REQUIRE(f.payloads.size() == 2);
  CHECK((f.payloads[0][0] & 0x1F) == kNalStapA);  // SEI + first slice
  CHECK(f.payloads[1].span()[0] == 0x41);         // the second slice alone
  CHECK(f.payloads[1].size() == 900);
  CHECK_FALSE(f.keyframe);
  // A keyframe that brings its own SPS gets no second copy.
  REQUIRE(p.packetize(frame(true, {kSps, kPps, nal(0x65, 50, 5)}), 80, f));
  REQUIRE(f.payloads.size() == 1);
  CHECK(f.payloads[0].size() == 1 + 2 + kSps.size() + 2 + kPps.size() + 2 + 50);
}

TEST_CASE("the RTP time is the presentation time at 90 kHz, modulo 2^32") {
  H264Packetizer p;
  PacketizedFrame f;
  (void)p.packetize(sequence_header(), 0, f);
  Bytes body = frame(false, {nal(0x41, 10, 1)});
  body[4] = 40;  // composition time 40 ms
  REQUIRE(p.packetize(body, 0xFFFFFFF0u, f));
  CHECK(f.timestamp == static_cast<uint32_t>((0xFFFFFFF0u + 40u) * 90u));
}

TEST_CASE("packetiser to depacketiser gives the same bodies back, across the sequence number wrap") {
  H264Packetizer p(500);
  H264Depacketizer d;
  std::vector<Packet> packets;
  uint16_t seq = 65530;
  PacketizedFrame f;
  (void)p.packetize(sequence_header(), 0, f);
  std::vector<Bytes> bodies;
  for (int i = 0; i < 12; ++i) {
    const bool key = i % 6 == 0;
    std::vector<Bytes> nals;
    if (i % 4 == 1) nals.push_back(nal(0x06, 30, static_cast<uint8_t>(i)));
    nals.push_back(nal(key ? 0x65 : 0x41, 100 + static_cast<size_t>(i) * 250, static_cast<uint8_t>(i)));
    if (i % 3 == 2) nals.push_back(nal(0x01, 20, static_cast<uint8_t>(i + 1)));
    bodies.push_back(frame(key, nals));
    REQUIRE(p.packetize(bodies.back(), static_cast<uint32_t>(i * 40), f));
    for (const auto& pl : f.payloads) CHECK(pl.size() <= 500);
    to_packets(f, seq, packets);
  }
  CHECK(seq < 100);  // it wrapped
  auto out = depacketize(d, packets);
  REQUIRE(out.size() == bodies.size() + 1);
  CHECK(out[0].sequence_header);
  CHECK(out[0].body == sequence_header());
  for (size_t i = 0; i < bodies.size(); ++i) {
    CAPTURE(i);
    CHECK(out[i + 1].body == bodies[i]);
    CHECK(out[i + 1].timestamp_ms == i * 40);
    CHECK(out[i + 1].keyframe == (i % 6 == 0));
  }
  CHECK(d.stats().lost_packets == 0);
  CHECK(d.stats().damaged_frames == 0);
  CHECK_FALSE(d.take_keyframe_request());
}

TEST_CASE("a lost FU-A middle drops that frame only and asks for a keyframe") {
  H264Packetizer p(400);
  H264Depacketizer d;
  std::vector<Packet> packets;
  uint16_t seq = 100;
  PacketizedFrame f;
  (void)p.packetize(sequence_header(), 0, f);
  std::vector<Bytes> bodies;
  size_t drop = 0;
  for (int i = 0; i < 3; ++i) {
    bodies.push_back(frame(i == 0, {nal(i == 0 ? 0x65 : 0x41, 1000, static_cast<uint8_t>(i))}));
    REQUIRE(p.packetize(bodies.back(), static_cast<uint32_t>(i * 33), f));
    REQUIRE(f.payloads.size() >= 3);
    if (i == 1) drop = packets.size() + 1;  // the second fragment of the second frame
    to_packets(f, seq, packets);
  }
  packets.erase(packets.begin() + static_cast<long>(drop));
  auto out = depacketize(d, packets);
  REQUIRE(out.size() == 3);  // sequence header, frames 0 and 2
  CHECK(out[1].body == bodies[0]);
  CHECK(out[2].body == bodies[2]);
  CHECK(d.stats().lost_packets == 1);
  CHECK(d.stats().damaged_frames == 1);
  CHECK(d.take_keyframe_request());
  CHECK_FALSE(d.take_keyframe_request());
}

TEST_CASE("a lost last fragment: the frame is dropped when the next timestamp comes") {
  H264Packetizer p(400);
  H264Depacketizer d;
  std::vector<Packet> packets;
  uint16_t seq = 0;
  PacketizedFrame f;
  (void)p.packetize(sequence_header(), 0, f);
  for (int i = 0; i < 4; ++i) {
    REQUIRE(p.packetize(frame(i == 0, {nal(i == 0 ? 0x65 : 0x41, 1000, 1)}), static_cast<uint32_t>(i * 33), f));
    to_packets(f, seq, packets);
  }
  // Frame 0 is a STAP-A and 3 fragments, frame 1 3 fragments: drop frame 1's marker packet.
  packets.erase(packets.begin() + 6);
  auto out = depacketize(d, packets);
  // Frame 1 lost its end; frame 2's start followed no marker bit, so it may have lost its own
  // start: both dropped, frame 3 goes on.
  CHECK(d.stats().damaged_frames == 2);
  REQUIRE(out.size() == 3);
  CHECK(out[0].sequence_header);
  CHECK(out[1].timestamp_ms == 0);
  CHECK(out[2].timestamp_ms == 99);
}

TEST_CASE("unknown, malformed and stale packets") {
  H264Depacketizer d;
  std::vector<DepacketizedFrame> out;
  auto push = [&](const Bytes& payload, uint16_t seq, uint32_t ts, bool marker) {
    Bytes p(kRtpFixedHeaderSize);
    write_fixed_header(p.data(), marker, 96, seq, ts, 1);
    p.insert(p.end(), payload.begin(), payload.end());
    auto v = parse_rtp(p);
    REQUIRE(v.ok());
    d.push(*v, out);
  };
  // A STAP-A with SPS and PPS, then an IDR: a sequence header and a keyframe.
  Bytes stap = {0x78};
  for (const auto& n : {kSps, kPps}) {
    const auto len = sluice::test::be16(n.size());
    stap.insert(stap.end(), len.begin(), len.end());
    stap.insert(stap.end(), n.begin(), n.end());
  }
  push(stap, 1, 0, false);
  push(hex("65 88 84 00"), 2, 0, true);
  REQUIRE(out.size() == 2);
  CHECK(out[1].keyframe);
  CHECK(out[1].body == frame(true, {hex("65 88 84 00")}));
  push(hex("79 00 01"), 3, 3000, true);  // STAP-B: skipped
  CHECK(d.stats().unknown_packets == 1);
  push(hex("78 00 09 41"), 4, 6000, true);  // a STAP-A whose size runs past it
  CHECK(d.stats().malformed_packets == 1);
  CHECK(d.stats().damaged_frames == 1);
  push(hex("7c 01 aa"), 5, 9000, true);  // a FU-A middle with no start
  CHECK(d.stats().damaged_frames == 2);
  push(hex("41 9a"), 5, 9000, true);  // the same number again
  CHECK(d.stats().stale_packets == 1);
  push(hex("41 9a 01"), 6, 12000, true);
  REQUIRE(out.size() == 3);
  CHECK(out[2].body == frame(false, {hex("41 9a 01")}));
  CHECK(out[2].timestamp_ms == 133);
  // A FU-A whose unit type is no H.264 unit (0, or an RTP aggregate's 24): its frame is dropped,
  // never passed on with a unit a decoder would read as something else.
  push(hex("7c 98 aa"), 7, 15000, false);  // FU-A start of a "type 24" unit
  push(hex("7c 58 bb"), 8, 15000, true);
  CHECK(d.stats().malformed_packets == 2);
  CHECK(d.stats().damaged_frames == 3);
  push(hex("7c 80 aa"), 9, 18000, false);  // type 0
  push(hex("7c 40 bb"), 10, 18000, true);
  CHECK(d.stats().damaged_frames == 4);
  CHECK(out.size() == 3);
}

TEST_CASE("an access unit past its byte limit is dropped, and the next one still comes") {
  H264Depacketizer d(H264Depacketizer::Limits{2000, 8});
  std::vector<DepacketizedFrame> out;
  uint16_t seq = 0;
  auto push = [&](const Bytes& payload, uint32_t ts, bool marker) {
    Bytes p(kRtpFixedHeaderSize);
    write_fixed_header(p.data(), marker, 96, seq++, ts, 1);
    p.insert(p.end(), payload.begin(), payload.end());
    auto v = parse_rtp(p);
    REQUIRE(v.ok());
    d.push(*v, out);
  };
  Bytes stap = {0x78};
  for (const auto& n : {kSps, kPps}) {
    const auto len = sluice::test::be16(n.size());
    stap.insert(stap.end(), len.begin(), len.end());
    stap.insert(stap.end(), n.begin(), n.end());
  }
  push(stap, 0, true);  // parameter sets alone: a sequence header, no frame
  Bytes start = {0x7c, 0x85}, middle = {0x7c, 0x05}, end = {0x7c, 0x45};
  const Bytes chunk(900, 0xAB);
  for (Bytes* b : {&start, &middle, &end}) b->insert(b->end(), chunk.begin(), chunk.end());
  push(start, 1500, false);
  push(middle, 1500, false);
  push(middle, 1500, false);
  push(end, 1500, true);
  CHECK(d.stats().damaged_frames == 1);
  push(hex("41 9a 01"), 3000, true);
  REQUIRE(out.size() == 2);
  CHECK(out[0].sequence_header);
  CHECK_FALSE(out[1].keyframe);
}
