#include "media/rtp/h264_packetizer.hpp"

#include <algorithm>

#include "base/byte_io.hpp"
#include "media/flv/flv_tag_head.hpp"
#include "media/rtp/h264_nal.hpp"
#include "media/rtp/rtp_packet.hpp"

namespace sluice::media::rtp {

namespace {

// The smallest payload that still carries a byte of a FU-A fragment (indicator, header, data).
constexpr size_t kMinPayload = 3;

// Where the payloads of a frame go while it is built: one buffer and the ranges in it.
struct PayloadBuilder {
  std::vector<uint8_t> bytes;
  std::vector<std::pair<size_t, size_t>> ranges;
  size_t start = 0;

  void begin() { start = bytes.size(); }
  void end() { ranges.emplace_back(start, bytes.size() - start); }
};

void single(PayloadBuilder& b, std::span<const uint8_t> nal) {
  b.begin();
  b.bytes.insert(b.bytes.end(), nal.begin(), nal.end());
  b.end();
}

// STAP-A (type 24): one header whose F is any unit's F and NRI the highest of theirs, then each
// NAL unit behind a 16-bit size (docs/rtp.md, "STAP-A").
void stap_a(PayloadBuilder& b, std::span<const std::span<const uint8_t>> nals) {
  uint8_t f = 0, nri = 0;
  for (auto nal : nals) {
    f |= nal[0] & 0x80;
    nri = std::max<uint8_t>(nri, nal[0] & 0x60);
  }
  b.begin();
  ByteWriter w(b.bytes);
  w.u8(static_cast<uint8_t>(f | nri | kNalStapA));
  for (auto nal : nals) {
    w.u16be(static_cast<uint16_t>(nal.size()));
    w.bytes(nal);
  }
  b.end();
}

// FU-A (type 28): the NAL header's F and NRI in the indicator, its type in the FU header with
// the start and end bits; the header byte itself is not repeated (docs/rtp.md, "FU-A").
void fu_a(PayloadBuilder& b, std::span<const uint8_t> nal, size_t max_payload) {
  const auto body = nal.subspan(1);
  const size_t room = max_payload - 2;
  const size_t count = (body.size() + room - 1) / room;
  // Fragments as even as they can be with all but the last of one size (at most `room`, since
  // count * room >= the body), the last no larger: a sender may then hand a player's fragments
  // of a unit to the kernel as one GSO datagram (server/webrtc/udp_port.hpp).
  const size_t size = (body.size() + count - 1) / count;
  const uint8_t indicator = static_cast<uint8_t>((nal[0] & 0xE0) | kNalFuA);
  size_t pos = 0;
  for (size_t i = 0; i < count; ++i) {
    const size_t n = i + 1 < count ? size : body.size() - pos;
    uint8_t header = nal[0] & 0x1F;
    if (i == 0) header |= kFuStart;
    if (i + 1 == count) header |= kFuEnd;
    b.begin();
    b.bytes.push_back(indicator);
    b.bytes.push_back(header);
    b.bytes.insert(b.bytes.end(), body.begin() + static_cast<ptrdiff_t>(pos),
                   body.begin() + static_cast<ptrdiff_t>(pos + n));
    b.end();
    pos += n;
  }
}

}  // namespace

H264Packetizer::H264Packetizer(size_t max_payload) : max_payload_(std::max(max_payload, kMinPayload)) {}

bool H264Packetizer::take_config(std::span<const uint8_t> record) {
  auto config = read_avc_record(record);
  if (!config) return false;
  length_size_ = config->length_size;
  sps_.clear();
  pps_.clear();
  for (auto s : config->sps) sps_.emplace_back(s.begin(), s.end());
  for (auto p : config->pps) pps_.emplace_back(p.begin(), p.end());
  return true;
}

bool H264Packetizer::packetize(std::span<const uint8_t> body, uint32_t timestamp_ms, PacketizedFrame& out) {
  const FlvTagHead head =
      read_flv_tag_head(9, body.first(std::min(body.size(), kFlvTagHeadBytes)), static_cast<uint32_t>(body.size()));
  if (head.codec != Mp4Codec::Avc || (head.kind != FlvPacketKind::Config && head.kind != FlvPacketKind::Frame)) {
    ++stats_.dropped;
    return false;
  }
  const auto data = body.subspan(head.prefix);
  if (head.kind == FlvPacketKind::Config) {
    if (!take_config(data)) ++stats_.dropped;
    return false;
  }
  if (!has_config()) {
    ++stats_.dropped;
    return false;
  }
  std::vector<std::span<const uint8_t>> nals;
  bool idr = false, has_sps = false;
  for_each_avcc_nal(data, length_size_, [&](std::span<const uint8_t> nal) {
    const uint8_t type = nal[0] & 0x1F;
    if (type == kNalAud || type == kNalFiller) return;  // rule 2
    if (type == 0 || type >= kNalStapA) return;         // no H.264 unit: RTP would read it as its own
    idr |= type == kNalIdr;
    has_sps |= type == kNalSps;
    nals.push_back(nal);
  });
  if (nals.empty()) {
    ++stats_.dropped;
    return false;
  }
  if (idr && !has_sps) {
    std::vector<std::span<const uint8_t>> sets;
    for (const auto& s : sps_) sets.emplace_back(s);
    for (const auto& p : pps_) sets.emplace_back(p);
    nals.insert(nals.begin(), sets.begin(), sets.end());
  }
  out.timestamp = static_cast<uint32_t>(timestamp_ms + static_cast<uint32_t>(head.cts_ms)) * (kVideoClockRate / 1000);
  out.keyframe = idr;
  build(nals, out);
  ++stats_.frames;
  stats_.payloads += out.payloads.size();
  return true;
}

void H264Packetizer::build(const std::vector<std::span<const uint8_t>>& nals, PacketizedFrame& out) {
  PayloadBuilder b;
  size_t total = 0;
  for (auto n : nals) total += n.size() + 4;
  b.bytes.reserve(total + total / max_payload_ * 2 + 16);
  for (size_t i = 0; i < nals.size();) {
    // As many of the following NAL units as fit in one STAP-A (rule 3).
    size_t j = i, size = 1;
    while (j < nals.size() && size + 2 + nals[j].size() <= max_payload_) size += 2 + nals[j++].size();
    if (j - i >= 2) {
      stap_a(b, std::span(nals).subspan(i, j - i));
      i = j;
    } else if (nals[i].size() <= max_payload_) {
      single(b, nals[i++]);
    } else {
      fu_a(b, nals[i++], max_payload_);
    }
  }
  Slice all = Slice::adopt(std::move(b.bytes));
  out.payloads.clear();
  out.payloads.reserve(b.ranges.size());
  for (auto [pos, len] : b.ranges) out.payloads.push_back(all.share(pos, len));
}

}  // namespace sluice::media::rtp
