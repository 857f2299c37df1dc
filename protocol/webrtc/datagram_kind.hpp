// Which protocol a datagram on the WebRTC UDP port belongs to. STUN, DTLS, SRTP and SRTCP share
// one port (BUNDLE and rtcp-mux), and RFC 7983 tells them apart by the first byte; RFC 5761 tells
// RTCP from RTP by the second (docs/webrtc-protocol.md, "One port for everything").
#pragma once

#include <cstdint>
#include <span>

namespace sluice::protocol::webrtc {

enum class DatagramKind : uint8_t {
  Stun,   // first byte 0..3
  Dtls,   // 20..63
  Rtp,    // 128..191, and a second byte outside RTCP's packet types
  Rtcp,   // 128..191, second byte 192..223 (RTCP packet types 200..207 and the other RTCP types)
  Other,  // ZRTP (16..19), TURN channels (64..79), anything else, empty: dropped
};

constexpr DatagramKind classify_datagram(std::span<const uint8_t> datagram) {
  if (datagram.empty()) return DatagramKind::Other;
  const uint8_t b = datagram[0];
  if (b <= 3) return DatagramKind::Stun;
  if (b >= 20 && b <= 63) return DatagramKind::Dtls;
  if (b >= 128 && b <= 191) {
    // RTP's payload types avoid 64..95 (with the marker bit: 192..223) under rtcp-mux, so that
    // the byte where RTCP has its packet type tells them apart (RFC 5761 4).
    if (datagram.size() >= 2 && datagram[1] >= 192 && datagram[1] <= 223) return DatagramKind::Rtcp;
    return DatagramKind::Rtp;
  }
  return DatagramKind::Other;
}

}  // namespace sluice::protocol::webrtc
