// ReceiveStatistics: what a receiver of one RTP stream reports back in its receiver reports
// (RFC 3550 section 6.4.1 and appendix A.3, A.8; docs/rtp.md, "Receiver reports"): the extended
// highest sequence number, packets lost in all and since the last report, the interarrival
// jitter, and the time since the sender's last sender report. A sender reads the round-trip time
// from the last two, and its congestion control the loss, so a WHIP publisher (a browser) sizes
// its bitrate by them. Sans-I/O: arrival times are passed in ms.
#pragma once

#include <cstdint>

#include "protocol/webrtc/rtcp.hpp"

namespace sluice::protocol::webrtc {

class ReceiveStatistics {
 public:
  explicit ReceiveStatistics(uint32_t clock_rate) : clock_rate_(clock_rate) {}

  // A packet as it arrived (retransmissions included: they count as received, not as lost).
  void on_packet(uint16_t sequence, uint32_t rtp_timestamp, int64_t arrival_ms);
  // The sender's report: its NTP time, remembered for LSR and DLSR.
  void on_sender_report(uint64_t ntp_time, int64_t arrival_ms);
  // The report block for `ssrc` now; starts the next "since the last report" interval.
  ReportBlock report(uint32_t ssrc, int64_t now_ms);

  bool started() const { return started_; }
  uint64_t received() const { return received_; }
  int64_t lost() const;  // expected less received, since the first packet

 private:
  uint32_t clock_rate_;
  bool started_ = false;
  int64_t base_ = 0;     // extended number of the first packet
  int64_t highest_ = 0;  // extended highest number
  uint64_t received_ = 0;
  // At the last report: what was expected and received, for the fraction lost.
  int64_t expected_prior_ = 0;
  uint64_t received_prior_ = 0;
  // Jitter in RTP units, scaled by 16 (appendix A.8's integer form).
  uint32_t jitter_q4_ = 0;
  bool have_transit_ = false;
  int64_t transit_ = 0;
  // The last sender report: its compact NTP time and when it came.
  bool have_sr_ = false;
  uint32_t last_sr_ = 0;
  int64_t last_sr_arrival_ms_ = 0;
};

}  // namespace sluice::protocol::webrtc
