// Protocol control messages (types 1, 2, 3, 5, 6) and user control events (type 4):
// typed values, payload builders and parsers.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "base/result.hpp"

namespace sluice::protocol {

enum class UserControlEvent : uint16_t {
  StreamBegin = 0,
  StreamEof = 1,
  StreamDry = 2,
  SetBufferLength = 3,
  StreamIsRecorded = 4,
  PingRequest = 6,
  PingResponse = 7,
  BufferEmpty = 31,
  BufferReady = 32,
};

enum class PeerBandwidthLimit : uint8_t { Hard = 0, Soft = 1, Dynamic = 2 };

struct UserControl {
  UserControlEvent event = UserControlEvent::StreamBegin;
  uint32_t value = 0;   // stream id, or the ping timestamp
  uint32_t value2 = 0;  // buffer length in ms for SetBufferLength
};

struct PeerBandwidth {
  uint32_t window = 0;
  PeerBandwidthLimit limit = PeerBandwidthLimit::Dynamic;
};

// Payload builders (the caller sends them on csid 2, stream 0).
std::vector<uint8_t> build_u32(uint32_t value);  // Set Chunk Size, Abort, Ack, Window Ack Size
std::vector<uint8_t> build_peer_bandwidth(uint32_t window, PeerBandwidthLimit limit);
std::vector<uint8_t> build_user_control(const UserControl& uc);

// Parsers: short payloads are errors; unknown user control events parse (callers ignore them).
Result<uint32_t> parse_u32(std::span<const uint8_t> payload);
Result<PeerBandwidth> parse_peer_bandwidth(std::span<const uint8_t> payload);
Result<UserControl> parse_user_control(std::span<const uint8_t> payload);

}  // namespace sluice::protocol
