#include "protocol/webrtc/receive_statistics.hpp"

#include <algorithm>
#include <cstdlib>

namespace sluice::protocol::webrtc {

void ReceiveStatistics::on_packet(uint16_t sequence, uint32_t rtp_timestamp, int64_t arrival_ms) {
  if (!started_) {
    started_ = true;
    base_ = highest_ = sequence;
  } else {
    // The extended number nearest the highest so far (the 16-bit number wraps every 65536).
    const auto delta = static_cast<int16_t>(static_cast<uint16_t>(sequence - static_cast<uint16_t>(highest_)));
    highest_ = std::max(highest_, highest_ + delta);
  }
  ++received_;
  // Interarrival jitter: how much the transit time (arrival less RTP time) varies from packet to
  // packet, smoothed by 1/16. Retransmissions skew it a little, as they do in every receiver.
  const int64_t arrival = arrival_ms * static_cast<int64_t>(clock_rate_) / 1000;
  const int64_t transit = arrival - static_cast<int64_t>(rtp_timestamp);
  if (have_transit_) {
    // Modular RTP time: the difference of two transits fits 32 bits.
    const int64_t d = std::llabs(static_cast<int32_t>(static_cast<uint32_t>(transit - transit_)));
    jitter_q4_ += static_cast<uint32_t>(d - ((jitter_q4_ + 8) >> 4));
  }
  have_transit_ = true;
  transit_ = transit;
}

void ReceiveStatistics::on_sender_report(uint64_t ntp_time, int64_t arrival_ms) {
  have_sr_ = true;
  last_sr_ = compact_ntp(ntp_time);
  last_sr_arrival_ms_ = arrival_ms;
}

int64_t ReceiveStatistics::lost() const {
  return started_ ? (highest_ - base_ + 1) - static_cast<int64_t>(received_) : 0;
}

ReportBlock ReceiveStatistics::report(uint32_t ssrc, int64_t now_ms) {
  ReportBlock b;
  b.ssrc = ssrc;
  if (!started_) return b;
  const int64_t expected = highest_ - base_ + 1;
  const int64_t expected_interval = expected - expected_prior_;
  const int64_t received_interval = static_cast<int64_t>(received_ - received_prior_);
  const int64_t lost_interval = expected_interval - received_interval;
  expected_prior_ = expected;
  received_prior_ = received_;
  if (expected_interval > 0 && lost_interval > 0) {
    b.fraction_lost = static_cast<uint8_t>(std::min<int64_t>(255, (lost_interval << 8) / expected_interval));
  }
  b.cumulative_lost = static_cast<int32_t>(std::clamp<int64_t>(lost(), -0x800000, 0x7FFFFF));
  b.highest_sequence = static_cast<uint32_t>(highest_);
  b.jitter = jitter_q4_ >> 4;
  if (have_sr_) {
    b.last_sr = last_sr_;
    b.delay_since_last_sr = static_cast<uint32_t>(std::max<int64_t>(0, now_ms - last_sr_arrival_ms_) * 65536 / 1000);
  }
  return b;
}

}  // namespace sluice::protocol::webrtc
