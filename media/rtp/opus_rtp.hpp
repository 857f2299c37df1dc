// Opus over RTP (docs/rtp.md, "Opus over RTP"): one Opus packet per RTP payload, as it is, at a
// 48 kHz RTP clock. The hub's form is media/codec/opus.hpp's (Enhanced RTMP 'Opus').
//
// Rules:
//  1. Sending: a CodedFrames body's packet is the payload, a slice of the body (no copy); the RTP
//     time is the ms timestamp times 48, modulo 2^32. Sequence headers give no payload.
//  2. Receiving: the first packet is preceded by a sequence header (an OpusHead for `channels`,
//     which the SDP's "opus/48000/2" says is always 2 in WebRTC); each non-empty payload is one frame.
//     Sequence gaps are counted (Opus frames stand alone; the decoder conceals), stale packets
//     (at or behind the last sequence number) dropped, and so are empty payloads.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "base/bytes.hpp"
#include "media/rtp/depacketized_frame.hpp"
#include "media/rtp/rtp_packet.hpp"
#include "media/rtp/rtp_sequence.hpp"

namespace sluice::media::rtp {

struct OpusPayload {
  uint32_t timestamp = 0;  // RTP time, 48 kHz
  Slice payload;
};

// An audio tag body and its timestamp (ms): the payload, or nothing for a sequence header or a
// body that is not Opus.
std::optional<OpusPayload> packetize_opus(const Slice& body, uint32_t timestamp_ms);

class OpusDepacketizer {
 public:
  struct Stats {
    uint64_t packets = 0;
    uint64_t frames = 0;
    uint64_t lost_packets = 0;
    uint64_t stale_packets = 0;
    uint64_t empty_packets = 0;
  };

  explicit OpusDepacketizer(uint8_t channels = 2) : channels_(channels) {}

  void push(const RtpPacketView& packet, std::vector<DepacketizedFrame>& out);
  const Stats& stats() const { return stats_; }

 private:
  uint8_t channels_;
  Stats stats_;
  TimestampUnwrapper clock_;
  int64_t origin_ = 0;
  SequenceGate gate_;
};

}  // namespace sluice::media::rtp
