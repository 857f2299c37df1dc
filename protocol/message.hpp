// An RTMP message as the chunk layer delivers and accepts it, and the message type numbers.
#pragma once

#include <cstdint>

#include "base/bytes.hpp"

namespace sluice::protocol {

namespace msg_type {
inline constexpr uint8_t kSetChunkSize = 1;
inline constexpr uint8_t kAbort = 2;
inline constexpr uint8_t kAcknowledgement = 3;
inline constexpr uint8_t kUserControl = 4;
inline constexpr uint8_t kWindowAckSize = 5;
inline constexpr uint8_t kSetPeerBandwidth = 6;
inline constexpr uint8_t kAudio = 8;
inline constexpr uint8_t kVideo = 9;
inline constexpr uint8_t kDataAmf3 = 15;
inline constexpr uint8_t kSharedObjectAmf3 = 16;
inline constexpr uint8_t kCommandAmf3 = 17;
inline constexpr uint8_t kDataAmf0 = 18;
inline constexpr uint8_t kSharedObjectAmf0 = 19;
inline constexpr uint8_t kCommandAmf0 = 20;
inline constexpr uint8_t kAggregate = 22;
}  // namespace msg_type

// Conventional chunk stream ids for what we send.
namespace csid {
inline constexpr uint32_t kControl = 2;  // protocol control and user control, always
inline constexpr uint32_t kCommand = 3;  // NetConnection commands
inline constexpr uint32_t kStream = 5;   // NetStream commands and data on a stream
inline constexpr uint32_t kAudio = 6;
inline constexpr uint32_t kVideo = 7;
}  // namespace csid

struct Message {
  uint32_t csid = 0;
  uint8_t type = 0;
  uint32_t timestamp = 0;  // absolute, milliseconds, wraps modulo 2^32
  uint32_t stream_id = 0;  // message stream id (0 = NetConnection)
  Slice payload;
};

}  // namespace sluice::protocol
