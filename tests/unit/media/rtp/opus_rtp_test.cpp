// media/codec/opus (the hub's Opus bodies) and media/rtp/opus_rtp: a frame to a payload without a
// copy, RTP packets back to frames with a sequence header first, 48 kHz times in milliseconds.
#include <doctest/doctest.h>

#include <vector>

#include "media/codec/flv_audio.hpp"
#include "media/codec/opus.hpp"
#include "media/rtp/opus_rtp.hpp"
#include "unit/test_bytes.hpp"

using namespace sluice;
using namespace sluice::media;
using namespace sluice::media::rtp;
using sluice::test::Bytes;
using sluice::test::hex;

TEST_CASE("the canonical Opus bodies parse as Enhanced RTMP audio") {
  const Bytes header = opus_sequence_header_body(OpusHead{2, 312, 48000, 0});
  auto h = parse_audio_tag(header);
  REQUIRE(h.ok());
  CHECK(h->codec() == AudioCodec::Opus);
  CHECK(h->is_sequence_header());
  auto head = parse_opus_head(std::span<const uint8_t>(header).subspan(kOpusBodyPrefix));
  REQUIRE(head.has_value());
  CHECK(head->channels == 2);
  CHECK(head->pre_skip == 312);
  CHECK(head->input_sample_rate == 48000);
  const Bytes frame = opus_frame_body(hex("fc ff fe"));
  CHECK(frame == hex("91 4f 70 75 73 fc ff fe"));
  auto body = read_opus_body(frame);
  REQUIRE(body.has_value());
  CHECK_FALSE(body->sequence_header);
  CHECK(body->offset == 5);
  CHECK(body->size == 3);
  CHECK_FALSE(read_opus_body(hex("af 01 21 00")).has_value());  // AAC
  CHECK_FALSE(parse_opus_head(hex("4f 70 75 73 48 65 61 64 01 02")).has_value());
}

TEST_CASE("a frame's payload is a slice of its body, at 48 ticks per millisecond") {
  Slice body = Slice::copy_of(opus_frame_body(hex("fc ff fe")));
  auto p = packetize_opus(body, 1000);
  REQUIRE(p.has_value());
  CHECK(p->timestamp == 48000);
  CHECK(Bytes(p->payload.span().begin(), p->payload.span().end()) == hex("fc ff fe"));
  CHECK(body.use_count() == 2);
  CHECK_FALSE(packetize_opus(Slice::copy_of(opus_sequence_header_body({})), 0).has_value());
  CHECK(packetize_opus(Slice::copy_of(opus_frame_body({})), 0) == std::nullopt);
}

TEST_CASE("packets to frames: a sequence header first, losses counted, times from the first packet") {
  OpusDepacketizer d;
  std::vector<DepacketizedFrame> out;
  auto push = [&](uint16_t seq, uint32_t ts, const Bytes& payload) {
    Bytes p(kRtpFixedHeaderSize);
    write_fixed_header(p.data(), false, 111, seq, ts, 7);
    p.insert(p.end(), payload.begin(), payload.end());
    auto v = parse_rtp(p);
    REQUIRE(v.ok());
    d.push(*v, out);
  };
  push(65535, 0xFFFFFC40u, hex("fc 01"));
  push(0, 0, hex("fc 02"));  // both wrap
  push(2, 1920, hex("fc 04"));
  push(1, 960, hex("fc 03"));  // stale now
  push(3, 2880, {});           // empty
  REQUIRE(out.size() == 4);
  CHECK(out[0].sequence_header);
  CHECK(out[0].type == 8);
  CHECK(out[1].body == opus_frame_body(hex("fc 01")));
  CHECK(out[1].timestamp_ms == 0);
  CHECK(out[2].timestamp_ms == 20);
  CHECK(out[3].timestamp_ms == 60);
  CHECK(out[3].rtp_time == 0x100000000 + 1920);
  CHECK(d.stats().lost_packets == 1);
  CHECK(d.stats().stale_packets == 1);
  CHECK(d.stats().empty_packets == 1);
}
