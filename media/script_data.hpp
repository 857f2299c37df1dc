// onMetaData helpers for AMF0 data messages (RTMP type 18, FLV script tags).
//
// A publisher sends `@setDataFrame`, "onMetaData", {...}; subscribers and recordings must get
// "onMetaData", {...} with the rest byte-identical. Only the leading AMF0 strings are parsed (by
// hand, with ByteReader): the stripped payload is a re-slice, never a re-encode.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "base/bytes.hpp"
#include "base/result.hpp"

namespace sluice::media {

inline constexpr std::string_view kSetDataFrame = "@setDataFrame";
inline constexpr std::string_view kClearDataFrame = "@clearDataFrame";
inline constexpr std::string_view kOnMetaData = "onMetaData";

// The AMF0 string (marker 0x02) a data message starts with: its handler name.
Result<std::string_view> leading_amf0_string(std::span<const uint8_t> payload);

// "onMetaData", ...
bool is_on_metadata(std::span<const uint8_t> payload);
// "@setDataFrame", <any string>, ...
bool is_set_data_frame(std::span<const uint8_t> payload);
// "@setDataFrame", "onMetaData", ...
bool is_set_data_frame_metadata(std::span<const uint8_t> payload);

// For "@setDataFrame", <name>, ...: a slice of `payload` starting at <name>, sharing its bytes.
// Otherwise nullopt (relay the payload as it is).
std::optional<Slice> strip_set_data_frame(const Slice& payload);

}  // namespace sluice::media
