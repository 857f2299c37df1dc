#include "media/rtp/rtp_packet.hpp"

#include <string>

#include "base/byte_io.hpp"

namespace sluice::media::rtp {

uint32_t RtpPacketView::csrc(size_t i) const {
  return i < csrc_count && csrcs.size() >= (i + 1) * 4 ? load_u32be(csrcs.data() + i * 4) : 0;
}

Result<RtpPacketView> parse_rtp(std::span<const uint8_t> packet) {
  ByteReader r(packet);
  const uint8_t b0 = r.u8();
  const uint8_t b1 = r.u8();
  RtpPacketView v;
  v.sequence = r.u16be();
  v.timestamp = r.u32be();
  v.ssrc = r.u32be();
  if (r.failed()) return Error(Errc::Truncated, "RTP fixed header");
  if (b0 >> 6 != 2) return Error(Errc::BadVersion, "RTP version " + std::to_string(b0 >> 6));
  const bool padded = (b0 & 0x20) != 0;
  v.has_extension = (b0 & 0x10) != 0;
  v.csrc_count = b0 & 0x0F;
  v.marker = (b1 & 0x80) != 0;
  v.payload_type = b1 & 0x7F;
  v.csrcs = r.bytes(size_t{v.csrc_count} * 4);
  if (r.failed()) return Error(Errc::Truncated, "RTP CSRC list");
  if (v.has_extension) {
    v.extension_profile = r.u16be();
    const size_t words = r.u16be();
    v.extension = r.bytes(words * 4);
    if (r.failed()) return Error(Errc::Truncated, "RTP header extension");
  }
  std::span<const uint8_t> payload = r.rest();
  if (padded) {
    // The last byte counts the padding, itself included (RFC 3550 5.1).
    const uint8_t count = payload.empty() ? 0 : payload.back();
    if (count == 0 || count > payload.size()) return Error(Errc::Malformed, "RTP padding count");
    v.padding = count;
    payload = payload.first(payload.size() - count);
  }
  v.payload = payload;
  return v;
}

namespace {

bool is_two_byte_profile(uint16_t profile) { return (profile & 0xFFF0) == kTwoByteExtensionProfile; }

}  // namespace

Result<std::vector<RtpExtension>> read_extensions(const RtpPacketView& packet) {
  std::vector<RtpExtension> out;
  const bool one_byte = packet.extension_profile == kOneByteExtensionProfile;
  if (!packet.has_extension || (!one_byte && !is_two_byte_profile(packet.extension_profile))) return out;
  const auto ext = packet.extension;
  size_t pos = 0;
  while (pos < ext.size()) {
    const uint8_t b = ext[pos];
    if (b == 0) {  // padding between elements (both forms)
      ++pos;
      continue;
    }
    uint8_t id;
    size_t len;
    if (one_byte) {
      id = b >> 4;
      if (id == 15) break;  // reserved: stop reading (RFC 8285 4.2)
      len = size_t{b & 0x0Fu} + 1;
      pos += 1;
    } else {
      if (pos + 1 >= ext.size()) return Error(Errc::Malformed, "RTP two-byte extension header");
      id = b;
      len = ext[pos + 1];
      pos += 2;
    }
    if (len > ext.size() - pos) return Error(Errc::Malformed, "RTP extension element past its extension");
    if (out.size() < kMaxExtensions) out.push_back({id, ext.subspan(pos, len)});
    pos += len;
  }
  return out;
}

std::optional<std::span<const uint8_t>> find_extension(const RtpPacketView& packet, uint8_t id) {
  auto all = read_extensions(packet);
  if (!all) return std::nullopt;
  for (const auto& e : *all) {
    if (e.id == id) return e.data;
  }
  return std::nullopt;
}

void write_fixed_header(uint8_t* out, bool marker, uint8_t payload_type, uint16_t sequence, uint32_t timestamp,
                        uint32_t ssrc) {
  out[0] = 0x80;
  out[1] = static_cast<uint8_t>((marker ? 0x80 : 0) | (payload_type & 0x7F));
  out[2] = static_cast<uint8_t>(sequence >> 8);
  out[3] = static_cast<uint8_t>(sequence);
  store_u32be(out + 4, timestamp);
  store_u32be(out + 8, ssrc);
}

Result<void> write_rtp_header(const RtpHeader& h, std::vector<uint8_t>& out) {
  if (h.csrcs.size() > 15) return Error(Errc::Malformed, "more than 15 CSRCs");
  if (h.payload_type > 127) return Error(Errc::Malformed, "RTP payload type past 127");
  bool one_byte = true;
  for (const auto& e : h.extensions) {
    if (e.id == 0) return Error(Errc::Malformed, "RTP extension id 0");
    if (e.id > 14 || e.data.empty() || e.data.size() > 16) one_byte = false;
    if (e.data.size() > 255) return Error(Errc::Malformed, "RTP extension element past 255 bytes");
  }
  const size_t start = out.size();
  out.resize(start + kRtpFixedHeaderSize);
  write_fixed_header(out.data() + start, h.marker, h.payload_type, h.sequence, h.timestamp, h.ssrc);
  out[start] = static_cast<uint8_t>(out[start] | h.csrcs.size());
  ByteWriter w(out);
  for (uint32_t c : h.csrcs) w.u32be(c);
  if (h.extensions.empty()) return {};
  out[start] |= 0x10;
  w.u16be(one_byte ? kOneByteExtensionProfile : kTwoByteExtensionProfile);
  const size_t length_at = out.size();
  w.u16be(0);
  for (const auto& e : h.extensions) {
    if (one_byte) {
      w.u8(static_cast<uint8_t>(e.id << 4 | (e.data.size() - 1)));
    } else {
      w.u8(e.id);
      w.u8(static_cast<uint8_t>(e.data.size()));
    }
    w.bytes(e.data);
  }
  while ((out.size() - length_at - 2) % 4 != 0) w.u8(0);
  const size_t words = (out.size() - length_at - 2) / 4;
  if (words > 0xFFFF) {
    out.resize(start);
    return Error(Errc::Malformed, "RTP header extension too long");
  }
  out[length_at] = static_cast<uint8_t>(words >> 8);
  out[length_at + 1] = static_cast<uint8_t>(words);
  return {};
}

}  // namespace sluice::media::rtp
