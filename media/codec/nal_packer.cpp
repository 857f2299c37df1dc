#include "media/codec/nal_packer.hpp"

#include <cstring>
#include <utility>

#include "base/byte_io.hpp"
#include "media/codec/fourcc.hpp"

namespace sluice::media {

namespace {

enum class NalKind : uint8_t { Vps, Sps, Pps, Dropped, Keyframe, Slice, Other };

NalKind kind_of(VideoCodec codec, std::span<const uint8_t> nal) {
  if (nal.empty()) return NalKind::Dropped;
  if (codec == VideoCodec::Avc) {
    switch (nal[0] & 0x1F) {
      case 7: return NalKind::Sps;
      case 8: return NalKind::Pps;
      case 9:                            // access unit delimiter
      case 12: return NalKind::Dropped;  // filler data
      case 5: return NalKind::Keyframe;
      case 1:
      case 2:
      case 3:
      case 4: return NalKind::Slice;
      default: return NalKind::Other;  // SEI, end of sequence, ...
    }
  }
  if (nal.size() < 2) return NalKind::Dropped;  // shorter than the HEVC NAL unit header
  const uint8_t type = (nal[0] >> 1) & 0x3F;
  if (type == 32) return NalKind::Vps;
  if (type == 33) return NalKind::Sps;
  if (type == 34) return NalKind::Pps;
  if (type == 35 || type == 38) return NalKind::Dropped;   // access unit delimiter, filler data
  if (type >= 16 && type <= 21) return NalKind::Keyframe;  // BLA, IDR, CRA
  return type < 32 ? NalKind::Slice : NalKind::Other;
}

// The offset of the next 00 00 01 at or after `from`; s.size() when there is none.
size_t next_start_code(std::span<const uint8_t> s, size_t from) {
  while (from + 2 < s.size()) {
    const void* one = std::memchr(s.data() + from + 2, 1, s.size() - from - 2);
    if (one == nullptr) break;
    const size_t k = static_cast<size_t>(static_cast<const uint8_t*>(one) - s.data());
    if (s[k - 1] == 0 && s[k - 2] == 0) return k - 2;
    from = k - 1;
  }
  return s.size();
}

NalList as_list(const std::vector<std::vector<uint8_t>>& sets) {
  NalList out;
  for (const auto& s : sets) out.emplace_back(s);
  return out;
}

}  // namespace

NalList split_annexb(std::span<const uint8_t> stream) {
  NalList out;
  size_t start = next_start_code(stream, 0);
  while (start < stream.size()) {
    const size_t begin = start + 3;
    const size_t next = next_start_code(stream, begin);
    size_t end = next;
    while (end > begin && stream[end - 1] == 0) --end;  // trailing_zero_8bits, a 4-byte start code's first 0
    if (end > begin) out.push_back(stream.subspan(begin, end - begin));
    start = next;
  }
  return out;
}

bool NalPacker::update_parameter_sets(const NalList& nals) {
  std::vector<std::vector<uint8_t>> vps, sps, pps;
  for (auto nal : nals) {
    switch (kind_of(codec_, nal)) {
      case NalKind::Vps: vps.emplace_back(nal.begin(), nal.end()); break;
      case NalKind::Sps: sps.emplace_back(nal.begin(), nal.end()); break;
      case NalKind::Pps: pps.emplace_back(nal.begin(), nal.end()); break;
      default: break;
    }
  }
  bool changed = false;
  for (auto [current, fresh] : {std::pair{&vps_, &vps}, std::pair{&sps_, &sps}, std::pair{&pps_, &pps}}) {
    if (!fresh->empty() && *fresh != *current) {
      *current = std::move(*fresh);
      changed = true;
    }
  }
  if (!changed) return false;
  auto record = codec_ == VideoCodec::Avc ? avc_decoder_config(as_list(sps_), as_list(pps_))
                                          : hevc_decoder_config(as_list(vps_), as_list(sps_), as_list(pps_));
  if (!record || *record == record_) return false;
  record_ = std::move(*record);
  return true;
}

void NalPacker::pack(const NalList& nals, int32_t cts_ms, std::vector<Body>& out) {
  if (update_parameter_sets(nals)) {
    Body header;
    header.sequence_header = true;
    ByteWriter w(header.bytes);
    if (codec_ == VideoCodec::Avc) {
      w.u8(0x17);
      w.u8(0);  // AVCPacketType: sequence header
      w.u24be(0);
    } else {
      w.u8(0x80 | 0x10 | static_cast<uint8_t>(VideoPacketType::SequenceStart));
      w.u32be(fourcc::kHvc1);
    }
    w.bytes(record_);
    out.push_back(std::move(header));
  }
  bool keyframe = false, picture = false;
  for (auto nal : nals) {
    const NalKind k = kind_of(codec_, nal);
    keyframe |= k == NalKind::Keyframe;
    picture |= k == NalKind::Keyframe || k == NalKind::Slice;
  }
  if (!picture || record_.empty()) {
    ++dropped_;
    return;
  }
  frame(nals, keyframe, cts_ms, out);
}

void NalPacker::frame(const NalList& nals, bool keyframe, int32_t cts_ms, std::vector<Body>& out) const {
  Body b;
  b.keyframe = keyframe;
  ByteWriter w(b.bytes);
  const uint8_t frame_type = keyframe ? 1 : 2;
  const uint32_t cts = static_cast<uint32_t>(cts_ms) & 0xFFFFFF;
  if (codec_ == VideoCodec::Avc) {
    w.u8(static_cast<uint8_t>(frame_type << 4 | kLegacyVideoCodecAvc));
    w.u8(1);  // AVCPacketType: NAL units
    w.u24be(cts);
  } else {
    const auto type = cts_ms == 0 ? VideoPacketType::CodedFramesX : VideoPacketType::CodedFrames;
    w.u8(static_cast<uint8_t>(0x80 | frame_type << 4 | static_cast<uint8_t>(type)));
    w.u32be(fourcc::kHvc1);
    if (cts_ms != 0) w.u24be(cts);
  }
  for (auto nal : nals) {
    const NalKind k = kind_of(codec_, nal);
    if (k != NalKind::Keyframe && k != NalKind::Slice && k != NalKind::Other) continue;
    w.u32be(static_cast<uint32_t>(nal.size()));
    w.bytes(nal);
  }
  out.push_back(std::move(b));
}

}  // namespace sluice::media
