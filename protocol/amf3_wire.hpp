// The AMF3 wire constants the decoder (amf3.cpp) and the encoder (amf3_encode.cpp) share.
// Internal to protocol/: nothing outside includes it.
#pragma once

#include <cstddef>
#include <cstdint>

#include "protocol/amf3.hpp"

namespace sluice::protocol::amf::amf3_wire {

constexpr size_t kDoubleBytes = 8;
constexpr size_t kVector32Bytes = 4;  // one element of Vector.<int> or Vector.<uint>
constexpr uint32_t kInlineFlag = 1;   // low bit of a U29 header: 1 = inline value, 0 = reference
// Object header bits once the inline flag is shifted out (AMF3 spec 3.12, U29O-traits).
constexpr uint32_t kInlineTraits = 0x01;    // 0 = the rest is a traits table index
constexpr uint32_t kExternalizable = 0x02;  // the class writes its own body
constexpr uint32_t kDynamic = 0x04;         // dynamic members follow the sealed ones
constexpr uint32_t kTraitsIndexShift = 1;
constexpr uint32_t kSealedCountShift = 3;
constexpr uint32_t kU29SignBit = 1u << 28;
constexpr uint32_t kU29Range = 1u << 29;
// Largest length or count that fits a U29 header after its flag bit.
constexpr uint32_t kMaxInlineCount = kAmf3MaxU29 >> 1;
// Largest traits index a traits reference header can carry.
constexpr uint32_t kMaxTraitIndex = kMaxInlineCount >> kTraitsIndexShift;

}  // namespace sluice::protocol::amf::amf3_wire
