#include "media/rtp/h264_depacketizer.hpp"

#include "base/byte_io.hpp"
#include "media/rtp/h264_nal.hpp"

namespace sluice::media::rtp {

namespace {

// Whether a packet's payload begins a NAL unit: a single unit, an aggregate, a FU-A start.
bool starts_nal_unit(std::span<const uint8_t> payload) {
  if (payload.empty()) return false;
  const uint8_t type = payload[0] & 0x1F;
  if (type >= 1 && type <= 23) return true;
  if (type == kNalStapA) return true;
  return type == kNalFuA && payload.size() >= 2 && (payload[1] & kFuStart) != 0;
}

}  // namespace

void H264Depacketizer::push(const RtpPacketView& p, std::vector<DepacketizedFrame>& out) {
  ++stats_.packets;
  const SequenceGate::Step step = gate_.pass(p.sequence);
  if (step.stale) {
    ++stats_.stale_packets;
    return;
  }
  stats_.lost_packets += step.missing;
  const bool gap = step.missing > 0;
  const int64_t time = clock_.unwrap(p.timestamp);
  if (stats_.packets == 1) origin_ = time;
  if (gap) on_gap(p, time);
  if (open_ && time != time_) finish(out);  // rule 1: the marker was lost or never sent
  if (!open_) begin(time);
  payload(p.payload);
  if (p.marker) finish(out);
}

void H264Depacketizer::on_gap(const RtpPacketView& p, int64_t time) {
  keyframe_wanted_ = true;
  if (open_) damage();  // the unit open before the gap lost its end, or its middle
  // The packet after the gap belongs to an access unit that may have lost its start.
  const bool clean_start = !open_ && starts_nal_unit(p.payload);
  if (open_ && time == time_) return;  // same unit, already damaged
  next_damaged_ = !clean_start;
}

void H264Depacketizer::begin(int64_t time) {
  open_ = true;
  time_ = time;
  damaged_ = std::exchange(next_damaged_, false);
  au_.clear();
  nal_units_ = 0;
  in_fragment_ = false;
}

void H264Depacketizer::damage() { damaged_ = true; }

void H264Depacketizer::payload(std::span<const uint8_t> payload) {
  if (payload.empty()) {
    ++stats_.malformed_packets;
    return damage();
  }
  const uint8_t type = payload[0] & 0x1F;
  // A unit being fragmented ends only with its FU-A end bit: anything else cuts it short.
  if (in_fragment_ && type != kNalFuA) {
    in_fragment_ = false;
    damage();
  }
  if (type >= 1 && type <= 23) return nal(payload);
  if (type == kNalFuA) return fragment(payload);
  if (type != kNalStapA) {
    ++stats_.unknown_packets;
    return;
  }
  ByteReader r(payload.subspan(1));
  while (!r.empty()) {
    const size_t size = r.u16be();
    auto unit = r.bytes(size);
    if (r.failed() || unit.empty()) {
      ++stats_.malformed_packets;
      return damage();
    }
    nal(unit);
  }
}

bool H264Depacketizer::room_for(size_t bytes) {
  if (au_.size() + bytes <= limits_.max_access_unit_bytes) return true;
  damage();
  return false;
}

void H264Depacketizer::nal(std::span<const uint8_t> unit) {
  if (damaged_) return;  // it goes nowhere: keep no bytes of it
  const uint8_t type = unit[0] & 0x1F;
  if (type == 0 || type >= kNalStapA) {  // not an H.264 unit (an aggregate inside an aggregate)
    ++stats_.unknown_packets;
    return;
  }
  if (nal_units_ >= limits_.max_nal_units) return damage();
  if (!room_for(4 + unit.size())) return;
  ByteWriter w(au_);
  w.u32be(static_cast<uint32_t>(unit.size()));
  w.bytes(unit);
  ++nal_units_;
}

void H264Depacketizer::fragment(std::span<const uint8_t> payload) {
  if (payload.size() < 3) {  // an indicator, a header and at least one byte of the unit
    ++stats_.malformed_packets;
    in_fragment_ = false;
    return damage();
  }
  if (damaged_) {  // the unit goes nowhere: keep no bytes of it
    in_fragment_ = false;
    return;
  }
  const uint8_t header = payload[1];
  const auto data = payload.subspan(2);
  if (header & kFuStart) {
    const uint8_t type = header & 0x1F;
    if (type == 0 || type >= kNalStapA) {  // no H.264 unit type: the unit cannot be rebuilt
      ++stats_.malformed_packets;
      in_fragment_ = false;
      return damage();
    }
    if (in_fragment_ || nal_units_ >= limits_.max_nal_units) {  // the previous unit never saw its end
      in_fragment_ = false;
      return damage();
    }
    if (!room_for(5 + data.size())) return;
    fragment_at_ = au_.size();
    ByteWriter w(au_);
    w.u32be(0);
    w.u8(static_cast<uint8_t>((payload[0] & 0xE0) | (header & 0x1F)));  // the unit's own header
    w.bytes(data);
    in_fragment_ = true;
    ++nal_units_;
  } else {
    if (!in_fragment_) return damage();  // its start was lost
    if (!room_for(data.size())) {
      in_fragment_ = false;
      return;
    }
    au_.insert(au_.end(), data.begin(), data.end());
  }
  if (header & kFuEnd) {
    store_u32be(au_.data() + fragment_at_, static_cast<uint32_t>(au_.size() - fragment_at_ - 4));
    in_fragment_ = false;
  }
}

void H264Depacketizer::finish(std::vector<DepacketizedFrame>& out) {
  open_ = false;
  if (in_fragment_) damage();  // the last unit never saw its end
  in_fragment_ = false;
  if (damaged_) {
    ++stats_.damaged_frames;
    keyframe_wanted_ = true;
    return;
  }
  NalList nals;
  for_each_avcc_nal(au_, 4, [&](std::span<const uint8_t> unit) { nals.push_back(unit); });
  bodies_.clear();
  const uint64_t dropped_before = packer_.dropped();
  packer_.pack(nals, 0, bodies_);
  stats_.unpacked += packer_.dropped() - dropped_before;
  const auto ms = static_cast<uint32_t>((time_ - origin_) / (kVideoClockRate / 1000));
  for (auto& b : bodies_) {
    DepacketizedFrame f;
    f.type = 9;
    f.body = std::move(b.bytes);
    f.timestamp_ms = ms;
    f.rtp_time = time_;
    f.keyframe = b.keyframe;
    f.sequence_header = b.sequence_header;
    if (!f.sequence_header) ++stats_.frames;
    out.push_back(std::move(f));
  }
}

void H264Depacketizer::flush(std::vector<DepacketizedFrame>& out) {
  if (open_) finish(out);
}

}  // namespace sluice::media::rtp
