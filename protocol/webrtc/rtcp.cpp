#include "protocol/webrtc/rtcp.hpp"

#include <algorithm>
#include <string>

#include "base/byte_io.hpp"

namespace sluice::protocol::webrtc {

namespace {

constexpr size_t kReportBlockSize = 24;
constexpr uint8_t kFmtNack = 1;
constexpr uint8_t kFmtTransportCc = 15;
constexpr uint8_t kFmtPli = 1;
constexpr uint8_t kFmtFir = 4;
constexpr uint8_t kFmtAfb = 15;                  // application layer feedback: REMB is one
constexpr uint32_t kRembId = 0x52454D42;         // "REMB"
constexpr uint64_t kNtpUnixOffset = 2208988800;  // seconds from 1900 to 1970
constexpr size_t kMaxBlocks = 31;

ReportBlock read_block(ByteReader& r) {
  ReportBlock b;
  b.ssrc = r.u32be();
  b.fraction_lost = r.u8();
  b.cumulative_lost = r.s24be();
  b.highest_sequence = r.u32be();
  b.jitter = r.u32be();
  b.last_sr = r.u32be();
  b.delay_since_last_sr = r.u32be();
  return b;
}

Result<void> read_blocks(ByteReader& r, size_t count, std::vector<ReportBlock>& out) {
  if (r.remaining() < count * kReportBlockSize) return Error(Errc::Malformed, "RTCP report count past its packet");
  for (size_t i = 0; i < count; ++i) out.push_back(read_block(r));
  return {};
}

Result<void> read_rtpfb(uint8_t fmt, ByteReader& r, RtcpCompound& out) {
  const uint32_t sender = r.u32be();
  const uint32_t media = r.u32be();
  if (r.failed()) return Error(Errc::Malformed, "RTCP feedback shorter than its SSRCs");
  if (fmt == kFmtNack) {
    Nack n{sender, media, {}};
    // Each FCI is a PID and a bitmask of the 16 numbers after it (docs/rtp.md, "NACK").
    while (r.remaining() >= 4) {
      const uint16_t pid = r.u16be();
      const uint16_t blp = r.u16be();
      n.sequences.push_back(pid);
      for (int i = 0; i < 16; ++i) {
        if (blp & (1u << i)) n.sequences.push_back(static_cast<uint16_t>(pid + i + 1));
      }
    }
    out.nacks.push_back(std::move(n));
  } else if (fmt == kFmtTransportCc) {
    TransportFeedback t{sender, media, 0, 0, 0, 0};
    t.base_sequence = r.u16be();
    t.status_count = r.u16be();
    t.reference_time = r.s24be();
    t.feedback_count = r.u8();
    if (r.failed()) return Error(Errc::Malformed, "transport-wide feedback shorter than its header");
    out.transport_feedback.push_back(t);
  } else {
    ++out.unknown;
  }
  return {};
}

Result<void> read_psfb(uint8_t fmt, ByteReader& r, RtcpCompound& out) {
  const uint32_t sender = r.u32be();
  const uint32_t media = r.u32be();
  if (r.failed()) return Error(Errc::Malformed, "RTCP feedback shorter than its SSRCs");
  if (fmt == kFmtPli) {
    out.plis.push_back({sender, media});
  } else if (fmt == kFmtFir) {
    Fir f{sender, {}};
    while (r.remaining() >= 8) {
      FirEntry e;
      e.ssrc = r.u32be();
      e.sequence = r.u8();
      r.skip(3);
      f.entries.push_back(e);
    }
    out.firs.push_back(std::move(f));
  } else if (fmt == kFmtAfb && r.remaining() >= 8 && load_u32be(r.rest().data()) == kRembId) {
    r.skip(4);
    const uint8_t count = r.u8();
    const uint32_t bits = r.u24be();
    if (r.remaining() < size_t{count} * 4) return Error(Errc::Malformed, "REMB SSRC count past its packet");
    Remb m{sender, uint64_t{bits & 0x3FFFF} << std::min<uint32_t>(bits >> 18, 46), {}};
    for (size_t i = 0; i < count; ++i) m.ssrcs.push_back(r.u32be());
    out.rembs.push_back(std::move(m));
  } else {
    ++out.unknown;
  }
  return {};
}

Result<void> read_packet(uint8_t count, uint8_t type, std::span<const uint8_t> body, RtcpCompound& out) {
  ByteReader r(body);
  switch (type) {
    case kRtcpSr: {
      SenderReport sr;
      sr.ssrc = r.u32be();
      sr.ntp_time = r.u64be();
      sr.rtp_time = r.u32be();
      sr.packet_count = r.u32be();
      sr.octet_count = r.u32be();
      if (r.failed()) return Error(Errc::Malformed, "SR shorter than its sender info");
      auto ok = read_blocks(r, count, sr.blocks);
      if (!ok) return ok;
      out.sender_reports.push_back(std::move(sr));
      return {};
    }
    case kRtcpRr: {
      ReceiverReport rr;
      rr.ssrc = r.u32be();
      if (r.failed()) return Error(Errc::Malformed, "RR without its SSRC");
      auto ok = read_blocks(r, count, rr.blocks);
      if (!ok) return ok;
      out.receiver_reports.push_back(std::move(rr));
      return {};
    }
    case kRtcpBye:
      if (r.remaining() < size_t{count} * 4) return Error(Errc::Malformed, "BYE count past its packet");
      for (size_t i = 0; i < count; ++i) out.byes.push_back(r.u32be());
      return {};
    case kRtcpSdes: ++out.sdes; return {};
    case kRtcpApp: ++out.app; return {};
    case kRtcpRtpfb: return read_rtpfb(count, r, out);
    case kRtcpPsfb: return read_psfb(count, r, out);
    default: ++out.unknown; return {};
  }
}

// The common header with the length left 0; finish() writes it once the packet is whole.
size_t begin(std::vector<uint8_t>& out, uint8_t count, uint8_t type) {
  const size_t at = out.size();
  out.push_back(static_cast<uint8_t>(0x80 | (count & 0x1F)));
  out.push_back(type);
  out.push_back(0);
  out.push_back(0);
  return at;
}

void finish(std::vector<uint8_t>& out, size_t at) {
  while ((out.size() - at) % 4 != 0) out.push_back(0);
  const size_t words = (out.size() - at) / 4 - 1;
  out[at + 2] = static_cast<uint8_t>(words >> 8);
  out[at + 3] = static_cast<uint8_t>(words);
}

void write_blocks(ByteWriter& w, std::span<const ReportBlock> blocks) {
  for (const auto& b : blocks.first(std::min(blocks.size(), kMaxBlocks))) {
    w.u32be(b.ssrc);
    w.u8(b.fraction_lost);
    w.u24be(static_cast<uint32_t>(b.cumulative_lost) & 0xFFFFFF);
    w.u32be(b.highest_sequence);
    w.u32be(b.jitter);
    w.u32be(b.last_sr);
    w.u32be(b.delay_since_last_sr);
  }
}

}  // namespace

Result<RtcpCompound> parse_rtcp(std::span<const uint8_t> bytes) {
  RtcpCompound out;
  ByteReader r(bytes);
  if (bytes.empty()) return Error(Errc::Truncated, "empty RTCP packet");
  while (!r.empty()) {
    const size_t at = r.position();
    const uint8_t b0 = r.u8();
    const uint8_t type = r.u8();
    const size_t size = (size_t{r.u16be()} + 1) * 4;
    if (r.failed()) return Error(Errc::Truncated, "RTCP header at byte " + std::to_string(at));
    if (b0 >> 6 != 2) return Error(Errc::BadVersion, "RTCP version " + std::to_string(b0 >> 6));
    if (size > bytes.size() - at)
      return Error(Errc::Truncated, "RTCP packet past the datagram at byte " + std::to_string(at));
    auto body = bytes.subspan(at + 4, size - 4);
    if (b0 & 0x20) {  // padding: its last byte counts it (RFC 3550 6.4.1)
      const uint8_t pad = body.empty() ? 0 : body.back();
      if (pad == 0 || pad > body.size()) return Error(Errc::Malformed, "RTCP padding count");
      body = body.first(body.size() - pad);
    }
    auto ok = read_packet(b0 & 0x1F, type, body, out);
    if (!ok) return std::move(ok).error().wrap("RTCP type " + std::to_string(type));
    r.skip(size - 4);
  }
  return out;
}

uint64_t ntp_from_unix_us(uint64_t unix_us) {
  const uint64_t seconds = unix_us / 1000000 + kNtpUnixOffset;
  const uint64_t fraction = ((unix_us % 1000000) << 32) / 1000000;
  return seconds << 32 | fraction;
}

void write_sender_report(const SenderReport& sr, std::vector<uint8_t>& out) {
  const size_t at = begin(out, static_cast<uint8_t>(std::min(sr.blocks.size(), kMaxBlocks)), kRtcpSr);
  ByteWriter w(out);
  w.u32be(sr.ssrc);
  w.u64be(sr.ntp_time);
  w.u32be(sr.rtp_time);
  w.u32be(sr.packet_count);
  w.u32be(sr.octet_count);
  write_blocks(w, sr.blocks);
  finish(out, at);
}

void write_receiver_report(const ReceiverReport& rr, std::vector<uint8_t>& out) {
  const size_t at = begin(out, static_cast<uint8_t>(std::min(rr.blocks.size(), kMaxBlocks)), kRtcpRr);
  ByteWriter w(out);
  w.u32be(rr.ssrc);
  write_blocks(w, rr.blocks);
  finish(out, at);
}

void write_sdes_cname(uint32_t ssrc, std::string_view cname, std::vector<uint8_t>& out) {
  const size_t at = begin(out, 1, kRtcpSdes);
  ByteWriter w(out);
  w.u32be(ssrc);
  cname = cname.substr(0, 255);
  w.u8(1);  // CNAME
  w.u8(static_cast<uint8_t>(cname.size()));
  w.string(cname);
  w.u8(0);  // the end of the item list; finish() pads the chunk to 32 bits with more zeros
  finish(out, at);
}

void write_nack(uint32_t sender_ssrc, uint32_t media_ssrc, std::span<const uint16_t> sequences,
                std::vector<uint8_t>& out) {
  if (sequences.empty()) return;
  // Sorted by distance from the first, so that numbers across the wrap still pack together.
  std::vector<uint16_t> sorted(sequences.begin(), sequences.end());
  const uint16_t base = sorted[0];
  std::sort(sorted.begin(), sorted.end(), [base](uint16_t a, uint16_t b) {
    return static_cast<uint16_t>(a - base) < static_cast<uint16_t>(b - base);
  });
  const size_t at = begin(out, kFmtNack, kRtcpRtpfb);
  ByteWriter w(out);
  w.u32be(sender_ssrc);
  w.u32be(media_ssrc);
  for (size_t i = 0; i < sorted.size();) {
    const uint16_t pid = sorted[i++];
    uint16_t blp = 0;
    while (i < sorted.size()) {
      const uint16_t d = static_cast<uint16_t>(sorted[i] - pid);
      if (d == 0) {  // a repeat
        ++i;
        continue;
      }
      if (d > 16) break;
      blp = static_cast<uint16_t>(blp | 1u << (d - 1));
      ++i;
    }
    w.u16be(pid);
    w.u16be(blp);
  }
  finish(out, at);
}

void write_pli(uint32_t sender_ssrc, uint32_t media_ssrc, std::vector<uint8_t>& out) {
  const size_t at = begin(out, kFmtPli, kRtcpPsfb);
  ByteWriter w(out);
  w.u32be(sender_ssrc);
  w.u32be(media_ssrc);
  finish(out, at);
}

void write_fir(uint32_t sender_ssrc, uint32_t media_ssrc, uint8_t sequence, std::vector<uint8_t>& out) {
  const size_t at = begin(out, kFmtFir, kRtcpPsfb);
  ByteWriter w(out);
  w.u32be(sender_ssrc);
  w.u32be(0);  // the media source field is unused in FIR (RFC 5104 4.3.1.2)
  w.u32be(media_ssrc);
  w.u8(sequence);
  w.u24be(0);
  finish(out, at);
}

void write_remb(uint32_t sender_ssrc, uint64_t bitrate_bps, std::span<const uint32_t> ssrcs,
                std::vector<uint8_t>& out) {
  const size_t at = begin(out, kFmtAfb, kRtcpPsfb);
  ByteWriter w(out);
  w.u32be(sender_ssrc);
  w.u32be(0);
  w.u32be(kRembId);
  ssrcs = ssrcs.first(std::min<size_t>(ssrcs.size(), 255));
  w.u8(static_cast<uint8_t>(ssrcs.size()));
  uint32_t exponent = 0;
  while ((bitrate_bps >> exponent) > 0x3FFFF) ++exponent;
  w.u24be(exponent << 18 | static_cast<uint32_t>(bitrate_bps >> exponent));
  for (uint32_t s : ssrcs) w.u32be(s);
  finish(out, at);
}

}  // namespace sluice::protocol::webrtc
