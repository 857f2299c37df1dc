#include "media/rtp/rtx.hpp"

#include <cstddef>

namespace sluice::media::rtp {

bool restore_rtx(std::span<const uint8_t> bytes, const RtpPacketView& rtx, uint8_t media_payload_type,
                 uint32_t media_ssrc, std::vector<uint8_t>& out) {
  if (rtx.payload.size() < 2) return false;
  const auto header = static_cast<size_t>(rtx.payload.data() - bytes.data());
  out.assign(bytes.begin(), bytes.begin() + static_cast<ptrdiff_t>(header));
  out[0] &= 0xDF;  // no padding
  out[1] = static_cast<uint8_t>((out[1] & 0x80) | (media_payload_type & 0x7F));
  out[2] = rtx.payload[0];  // the original sequence number
  out[3] = rtx.payload[1];
  out[8] = static_cast<uint8_t>(media_ssrc >> 24);
  out[9] = static_cast<uint8_t>(media_ssrc >> 16);
  out[10] = static_cast<uint8_t>(media_ssrc >> 8);
  out[11] = static_cast<uint8_t>(media_ssrc);
  out.insert(out.end(), rtx.payload.begin() + 2, rtx.payload.end());
  return true;
}

}  // namespace sluice::media::rtp
