// RTCP (docs/rtp.md, "RTCP"): reading a compound packet (RFC 3550 6.1; RFC 5506 lets feedback
// come alone) and writing the reports and feedback a WebRTC server sends. Sans-I/O; bounded:
// every length is checked against what remains, and a packet gives at most what it can hold.
//
// Read: SR and RR with their report blocks, SDES (skipped), BYE, APP (skipped), RTPFB 1 generic
// NACK (each PID+BLP pair as the sequence numbers it names), RTPFB 15 transport-wide congestion
// control (its header only, counted), PSFB 1 PLI, PSFB 4 FIR, PSFB 15 REMB. Anything else is
// counted as unknown and skipped.
// Written: SR, RR, SDES CNAME, NACK, PLI, FIR, REMB.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "base/result.hpp"

namespace sluice::protocol::webrtc {

inline constexpr uint8_t kRtcpSr = 200;
inline constexpr uint8_t kRtcpRr = 201;
inline constexpr uint8_t kRtcpSdes = 202;
inline constexpr uint8_t kRtcpBye = 203;
inline constexpr uint8_t kRtcpApp = 204;
inline constexpr uint8_t kRtcpRtpfb = 205;  // transport layer feedback (RFC 4585)
inline constexpr uint8_t kRtcpPsfb = 206;   // payload-specific feedback (RFC 4585)

struct ReportBlock {
  uint32_t ssrc = 0;
  uint8_t fraction_lost = 0;         // of 256, since the last report
  int32_t cumulative_lost = 0;       // 24 bits, signed
  uint32_t highest_sequence = 0;     // extended highest sequence number received
  uint32_t jitter = 0;               // RTP clock units
  uint32_t last_sr = 0;              // middle 32 bits of the last SR's NTP time
  uint32_t delay_since_last_sr = 0;  // 1/65536 s
};

struct SenderReport {
  uint32_t ssrc = 0;
  uint64_t ntp_time = 0;  // 32.32 fixed point seconds since 1900
  uint32_t rtp_time = 0;
  uint32_t packet_count = 0;
  uint32_t octet_count = 0;
  std::vector<ReportBlock> blocks;
};

struct ReceiverReport {
  uint32_t ssrc = 0;
  std::vector<ReportBlock> blocks;
};

struct Nack {
  uint32_t sender_ssrc = 0;
  uint32_t media_ssrc = 0;
  std::vector<uint16_t> sequences;  // in the order the pairs name them
};

struct Pli {
  uint32_t sender_ssrc = 0;
  uint32_t media_ssrc = 0;
};

struct FirEntry {
  uint32_t ssrc = 0;
  uint8_t sequence = 0;  // the command sequence number: a repeat of one already served is not new
};
struct Fir {
  uint32_t sender_ssrc = 0;
  std::vector<FirEntry> entries;
};

struct Remb {
  uint32_t sender_ssrc = 0;
  uint64_t bitrate_bps = 0;  // mantissa << exponent
  std::vector<uint32_t> ssrcs;
};

// Transport-wide congestion control feedback: the header fields, not the per-packet statuses.
struct TransportFeedback {
  uint32_t sender_ssrc = 0;
  uint32_t media_ssrc = 0;
  uint16_t base_sequence = 0;
  uint16_t status_count = 0;
  int32_t reference_time = 0;  // 24 bits signed, multiples of 64 ms
  uint8_t feedback_count = 0;
};

struct RtcpCompound {
  std::vector<SenderReport> sender_reports;
  std::vector<ReceiverReport> receiver_reports;
  std::vector<uint32_t> byes;  // the SSRCs that left
  std::vector<Nack> nacks;
  std::vector<Pli> plis;
  std::vector<Fir> firs;
  std::vector<Remb> rembs;
  std::vector<TransportFeedback> transport_feedback;
  uint32_t sdes = 0;
  uint32_t app = 0;
  uint32_t unknown = 0;  // packets of other types or feedback formats, skipped
};

// Errors: Truncated (a header or a packet past the end), BadVersion (not 2), Malformed (a
// count that does not fit its packet, padding that does not fit, REMB without its identifier is
// not one: counted as unknown instead). Nothing is returned from a compound with an error.
Result<RtcpCompound> parse_rtcp(std::span<const uint8_t> bytes);

// NTP time (32.32) from Unix time in microseconds, and its middle 32 bits (an SR's LSR field).
uint64_t ntp_from_unix_us(uint64_t unix_us);
constexpr uint32_t compact_ntp(uint64_t ntp) { return static_cast<uint32_t>(ntp >> 16); }

// Writers append one RTCP packet each to `out`; put several in one datagram for a compound.
// At most 31 report blocks are written (the count has 5 bits); more are left out.
void write_sender_report(const SenderReport& sr, std::vector<uint8_t>& out);
void write_receiver_report(const ReceiverReport& rr, std::vector<uint8_t>& out);
// One chunk with the CNAME item (at most 255 bytes of it).
void write_sdes_cname(uint32_t ssrc, std::string_view cname, std::vector<uint8_t>& out);
// Sequence numbers are packed into PID+BLP pairs (each covers a PID and the 16 after it); the
// list need not be sorted. Nothing is written for an empty list.
void write_nack(uint32_t sender_ssrc, uint32_t media_ssrc, std::span<const uint16_t> sequences,
                std::vector<uint8_t>& out);
void write_pli(uint32_t sender_ssrc, uint32_t media_ssrc, std::vector<uint8_t>& out);
void write_fir(uint32_t sender_ssrc, uint32_t media_ssrc, uint8_t sequence, std::vector<uint8_t>& out);
// The bitrate is written with the smallest exponent that fits its 18-bit mantissa (rounded down).
void write_remb(uint32_t sender_ssrc, uint64_t bitrate_bps, std::span<const uint32_t> ssrcs, std::vector<uint8_t>& out);

}  // namespace sluice::protocol::webrtc
