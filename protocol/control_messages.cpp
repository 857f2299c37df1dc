#include "protocol/control_messages.hpp"

#include "base/byte_io.hpp"

namespace sluice::protocol {

std::vector<uint8_t> build_u32(uint32_t value) {
  std::vector<uint8_t> out;
  ByteWriter(out).u32be(value);
  return out;
}

std::vector<uint8_t> build_peer_bandwidth(uint32_t window, PeerBandwidthLimit limit) {
  std::vector<uint8_t> out;
  ByteWriter w(out);
  w.u32be(window);
  w.u8(static_cast<uint8_t>(limit));
  return out;
}

std::vector<uint8_t> build_user_control(const UserControl& uc) {
  std::vector<uint8_t> out;
  ByteWriter w(out);
  w.u16be(static_cast<uint16_t>(uc.event));
  w.u32be(uc.value);
  if (uc.event == UserControlEvent::SetBufferLength) w.u32be(uc.value2);
  return out;
}

Result<uint32_t> parse_u32(std::span<const uint8_t> payload) {
  ByteReader r(payload);
  uint32_t v = r.u32be();
  if (r.failed()) return Error(Errc::Truncated, "control message shorter than 4 bytes");
  return v;
}

Result<PeerBandwidth> parse_peer_bandwidth(std::span<const uint8_t> payload) {
  ByteReader r(payload);
  PeerBandwidth pb;
  pb.window = r.u32be();
  // Some clients omit the limit type byte; treat it as dynamic.
  if (r.has(1)) {
    uint8_t type = r.u8();
    pb.limit = static_cast<PeerBandwidthLimit>(type > 2 ? 2 : type);
  }
  if (r.failed()) return Error(Errc::Truncated, "set peer bandwidth shorter than 4 bytes");
  return pb;
}

Result<UserControl> parse_user_control(std::span<const uint8_t> payload) {
  ByteReader r(payload);
  UserControl uc;
  uc.event = static_cast<UserControlEvent>(r.u16be());
  if (r.failed()) return Error(Errc::Truncated, "user control message shorter than 2 bytes");
  // Stream Begin 0 sent by some servers may lack the value; accept missing data as zero.
  if (r.has(4)) uc.value = r.u32be();
  if (uc.event == UserControlEvent::SetBufferLength) {
    if (!r.has(4)) return Error(Errc::Truncated, "set buffer length without a length");
    uc.value2 = r.u32be();
  }
  return uc;
}

}  // namespace sluice::protocol
