// RelayFixture: a worker loop (unit/server/loop_fixture.hpp), a stream registry and the relays'
// services, for the unit tests of push targets and pulls, which connect over 127.0.0.1 to an
// RtmpPeer (rtmp_peer.hpp) on the same loop; and the FLV-form frames they send.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "server/live/stream_registry.hpp"
#include "server/relay/relay_services.hpp"
#include "unit/server/loop_fixture.hpp"

namespace sluice::test {

struct RelayFixture : LoopFixture {
  server::StreamRegistry registry;
  server::DrainingRelays draining;
  server::RelayServices services{*loop, registry, nullptr, nullptr, &draining, {}};

  // What a stopping server does: connections still sending their end are closed.
  ~RelayFixture() { draining.close_all("test over"); }
};

// FLV-form frames as an encoder's publish brings them (media/frame.hpp).
using Bytes = std::vector<uint8_t>;
inline Bytes video_sequence_header() { return {0x17, 0, 0, 0, 0, 1, 0x64, 0, 0x1f, 0xff, 0xe0, 0}; }
inline Bytes audio_sequence_header() { return {0xaf, 0, 0x12, 0x10}; }
inline Bytes keyframe(uint8_t mark) { return {0x17, 1, 0, 0, 0, 0, 0, 0, 2, 0x65, mark}; }
inline Bytes inter_frame(uint8_t mark) { return {0x27, 1, 0, 0, 0, 0, 0, 0, 2, 0x41, mark}; }
inline Bytes audio_frame(uint8_t mark) { return {0xaf, 1, 0x21, mark}; }
// "onMetaData" {} as AMF0.
inline Bytes metadata() { return {0x02, 0, 10, 'o', 'n', 'M', 'e', 't', 'a', 'D', 'a', 't', 'a', 0x03, 0, 0, 0x09}; }

}  // namespace sluice::test
