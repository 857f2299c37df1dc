// libFuzzer target for the RTP receiving side (media/rtp/): the H.264 and Opus depacketisers fed
// RTP packets, straight or through the reorder buffer, and the H.264 packetiser fed what came out.
// Input: a mode byte (bit 0: Opus instead of H.264; bit 1: through ReorderBuffer; bits 2-7: the
// packetiser's payload size, 64 + 32 x n), then packets, each behind a 2-byte length (and, through
// the reorder buffer, a byte of milliseconds since the last one).
// Properties: no crash or sanitizer report; a packet that parses rebuilds to the same header
// fields, and read as RTX (media/rtp/rtx.hpp) restores either nothing or a packet that parses,
// with the original sequence number from its first two payload bytes and the rest of its payload;
// the reorder buffer lets each sequence number out once, in order (until a restart); every H.264
// frame is a legacy AVC body whose 4-byte lengths cover it exactly, with no parameter set, AUD or
// RTP type inside and a keyframe flag that says IDR; a sequence header's record parses; packetised
// again, no payload is past its size and, from the first keyframe on under one sequence header,
// the depacketiser gives the same frame bodies back; every Opus frame is the packet's payload
// behind the 'Opus' header and packetises back to it.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "media/codec/opus.hpp"
#include "media/rtp/h264_depacketizer.hpp"
#include "media/rtp/h264_nal.hpp"
#include "media/rtp/h264_packetizer.hpp"
#include "media/rtp/opus_rtp.hpp"
#include "media/rtp/reorder_buffer.hpp"
#include "media/rtp/rtp_packet.hpp"
#include "media/rtp/rtx.hpp"
#include "tests/fuzz/fuzz_input.hpp"

using namespace sluice;
using namespace sluice::media;
using namespace sluice::media::rtp;

namespace {

void check_rebuilt_header(const RtpPacketView& v) {
  std::vector<uint8_t> out;
  std::vector<uint32_t> csrcs;
  for (size_t i = 0; i < v.csrc_count; ++i) csrcs.push_back(v.csrc(i));
  auto ext = read_extensions(v);
  std::vector<RtpExtension> elements;
  if (ext) {
    for (const auto& e : *ext) {
      if (e.id != 0 && !e.data.empty()) elements.push_back(e);
    }
  }
  FUZZ_CHECK(write_rtp_header({v.marker, v.payload_type, v.sequence, v.timestamp, v.ssrc, csrcs, elements}, out).ok());
  out.insert(out.end(), v.payload.begin(), v.payload.end());
  auto again = parse_rtp(out);
  FUZZ_CHECK(again.ok());
  FUZZ_CHECK(again->marker == v.marker && again->payload_type == v.payload_type);
  FUZZ_CHECK(again->sequence == v.sequence && again->timestamp == v.timestamp && again->ssrc == v.ssrc);
  FUZZ_CHECK(again->csrc_count == v.csrc_count);
  FUZZ_CHECK(again->payload.size() == v.payload.size());
  auto ext_again = read_extensions(*again);
  FUZZ_CHECK(ext_again.ok() && ext_again->size() == elements.size());
}

void check_rtx(std::span<const uint8_t> packet, const RtpPacketView& v) {
  std::vector<uint8_t> out;
  if (!restore_rtx(packet, v, 96, 0xabcdef01, out)) {
    FUZZ_CHECK(v.payload.size() < 2);
    return;
  }
  auto original = parse_rtp(out);
  FUZZ_CHECK(original.ok());
  FUZZ_CHECK(original->payload_type == 96 && original->ssrc == 0xabcdef01 && original->padding == 0);
  FUZZ_CHECK(original->sequence == static_cast<uint16_t>(v.payload[0] << 8 | v.payload[1]));
  FUZZ_CHECK(original->timestamp == v.timestamp && original->marker == v.marker);
  FUZZ_CHECK(std::equal(original->payload.begin(), original->payload.end(), v.payload.begin() + 2, v.payload.end()));
}

void check_h264_frame(const DepacketizedFrame& f) {
  FUZZ_CHECK(f.type == 9);
  if (f.sequence_header) {
    FUZZ_CHECK(f.body.size() > 5 && f.body[0] == 0x17 && f.body[1] == 0);
    FUZZ_CHECK(read_avc_record(std::span<const uint8_t>(f.body).subspan(5)).has_value());
    return;
  }
  FUZZ_CHECK(f.body.size() > 5);
  FUZZ_CHECK(f.body[0] == (f.keyframe ? 0x17 : 0x27) && f.body[1] == 1);
  FUZZ_CHECK(f.body[2] == 0 && f.body[3] == 0 && f.body[4] == 0);
  size_t pos = 5;
  bool idr = false;
  while (pos < f.body.size()) {
    FUZZ_CHECK(f.body.size() - pos >= 4);
    const size_t len =
        size_t{f.body[pos]} << 24 | size_t{f.body[pos + 1]} << 16 | size_t{f.body[pos + 2]} << 8 | f.body[pos + 3];
    pos += 4;
    FUZZ_CHECK(len > 0 && len <= f.body.size() - pos);
    const uint8_t type = f.body[pos] & 0x1F;
    FUZZ_CHECK(type != 0 && type < kNalStapA && type != kNalSps && type != kNalPps && type != kNalAud &&
               type != kNalFiller);
    idr |= type == kNalIdr;
    pos += len;
  }
  FUZZ_CHECK(idr == f.keyframe);
}

// The frames packetised again and depacketised: the same bodies from the first keyframe on, when
// there was one sequence header.
void check_round_trip(const std::vector<DepacketizedFrame>& frames, size_t max_payload) {
  H264Packetizer packetizer(max_payload);
  H264Depacketizer depacketizer;
  std::vector<DepacketizedFrame> again;
  size_t headers = 0;
  uint16_t seq = 0;
  for (const auto& f : frames) {
    headers += f.sequence_header;
    PacketizedFrame p;
    if (!packetizer.packetize(f.body, f.timestamp_ms, p)) continue;
    for (size_t i = 0; i < p.payloads.size(); ++i) {
      FUZZ_CHECK(!p.payloads[i].empty() && p.payloads[i].size() <= max_payload);
      std::vector<uint8_t> packet(kRtpFixedHeaderSize);
      write_fixed_header(packet.data(), i + 1 == p.payloads.size(), 96, seq++, p.timestamp, 1);
      packet.insert(packet.end(), p.payloads[i].span().begin(), p.payloads[i].span().end());
      auto v = parse_rtp(packet);
      FUZZ_CHECK(v.ok());
      depacketizer.push(*v, again);
    }
  }
  FUZZ_CHECK(depacketizer.stats().damaged_frames == 0);
  if (headers != 1) return;
  std::vector<const DepacketizedFrame*> want, got;
  bool keyed = false;
  for (const auto& f : frames) {
    keyed |= f.keyframe;
    if (keyed && !f.sequence_header) want.push_back(&f);
  }
  for (const auto& f : again) {
    if (!f.sequence_header) got.push_back(&f);
  }
  FUZZ_CHECK(want.size() == got.size());
  for (size_t i = 0; i < want.size(); ++i) FUZZ_CHECK(want[i]->body == got[i]->body);
}

void check_opus_frame(const DepacketizedFrame& f, std::span<const uint8_t> payload) {
  FUZZ_CHECK(f.type == 8);
  auto body = read_opus_body(f.body);
  FUZZ_CHECK(body.has_value());
  if (f.sequence_header) {
    FUZZ_CHECK(body->sequence_header);
    return;
  }
  FUZZ_CHECK(!body->sequence_header);
  FUZZ_CHECK(std::span<const uint8_t>(f.body).subspan(body->offset).size() == payload.size());
  auto again = packetize_opus(Slice::copy_of(f.body), f.timestamp_ms);
  FUZZ_CHECK(again.has_value());
  FUZZ_CHECK(std::equal(again->payload.span().begin(), again->payload.span().end(), payload.begin(), payload.end()));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::FuzzInput in{{data, size}};
  const auto mode = static_cast<uint8_t>(in.be(1));
  const bool opus = mode & 1;
  const bool reorder = mode & 2;
  const size_t max_payload = 64 + 32 * size_t{static_cast<uint8_t>(mode >> 2)};
  H264Depacketizer h264(H264Depacketizer::Limits{1 << 16, 64});
  OpusDepacketizer opus_depacketizer;
  ReorderBuffer buffer(ReorderBuffer::Limits{32, 40});
  std::vector<DepacketizedFrame> frames;
  std::vector<ReorderBuffer::Packet> ready;
  int64_t now = 0;
  bool have_last = false;
  uint16_t last = 0;

  auto deliver = [&](std::span<const uint8_t> packet) {
    auto v = parse_rtp(packet);
    if (!v) return;
    check_rebuilt_header(*v);
    check_rtx(packet, *v);
    const size_t before = frames.size();
    if (opus) {
      opus_depacketizer.push(*v, frames);
      for (size_t i = before; i < frames.size(); ++i) check_opus_frame(frames[i], v->payload);
    } else {
      h264.push(*v, frames);
    }
  };
  // After a restart (a jump of more than ReorderBuffer::kRestartDistance) order starts again at
  // the packet that made it.
  bool restarted = false;
  uint16_t restart_seq = 0;
  auto drain = [&] {
    for (auto& p : ready) {
      if (restarted && p.sequence == restart_seq) {
        have_last = false;
        restarted = false;
      }
      if (have_last) FUZZ_CHECK(seq_newer(p.sequence, last));
      have_last = true;
      last = p.sequence;
      deliver(p.bytes.span());
    }
    ready.clear();
  };
  while (in.left() > 0) {
    const size_t len = static_cast<size_t>(in.be(2));
    if (reorder) now += static_cast<int64_t>(in.be(1));
    const auto packet = in.bytes(len);
    if (!reorder) {
      deliver(packet);
      continue;
    }
    const uint16_t seq = packet.size() >= 4 ? static_cast<uint16_t>(packet[2] << 8 | packet[3]) : 0;
    const uint64_t restarts = buffer.stats().restarts;
    buffer.push(seq, Slice::copy_of(packet), now, ready);
    if (buffer.stats().restarts != restarts) {
      restarted = true;
      restart_seq = seq;
    }
    buffer.poll(now, ready);
    FUZZ_CHECK(buffer.held() <= 32);
    drain();
  }
  if (reorder) {
    buffer.flush(ready);
    drain();
  }
  if (!opus) {
    h264.flush(frames);
    for (const auto& f : frames) check_h264_frame(f);
    check_round_trip(frames, max_payload);
  }
  return 0;
}
