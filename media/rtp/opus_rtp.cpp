#include "media/rtp/opus_rtp.hpp"

#include "media/codec/opus.hpp"

namespace sluice::media::rtp {

std::optional<OpusPayload> packetize_opus(const Slice& body, uint32_t timestamp_ms) {
  const auto opus = read_opus_body(body.span());
  if (!opus || opus->sequence_header || opus->size == 0) return std::nullopt;
  return OpusPayload{timestamp_ms * (kOpusClockRate / 1000), body.share(opus->offset, opus->size)};
}

void OpusDepacketizer::push(const RtpPacketView& p, std::vector<DepacketizedFrame>& out) {
  ++stats_.packets;
  const SequenceGate::Step step = gate_.pass(p.sequence);
  if (step.stale) {
    ++stats_.stale_packets;
    return;
  }
  stats_.lost_packets += step.missing;
  const int64_t time = clock_.unwrap(p.timestamp);
  if (step.first) {
    origin_ = time;
    DepacketizedFrame header;
    header.type = 8;
    header.body = opus_sequence_header_body(OpusHead{channels_, 0, kOpusClockRate, 0});
    header.sequence_header = true;
    header.rtp_time = time;
    out.push_back(std::move(header));
  }
  if (p.payload.empty()) {
    ++stats_.empty_packets;
    return;
  }
  DepacketizedFrame f;
  f.type = 8;
  f.body = opus_frame_body(p.payload);
  f.rtp_time = time;
  f.timestamp_ms = static_cast<uint32_t>((time - origin_) / (kOpusClockRate / 1000));
  ++stats_.frames;
  out.push_back(std::move(f));
}

}  // namespace sluice::media::rtp
