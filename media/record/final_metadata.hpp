// The onMetaData of a finalized recording: the publisher's properties, plus what only the whole
// file can tell (duration, size, a keyframe index), laid out as ffmpeg's FLV muxer does with
// `-flvflags add_keyframe_index`, so players that seek by that index (flv.js, ffmpeg, VLC) can.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "media/flv/flv.hpp"
#include "media/record/recording_scanner.hpp"

namespace sluice::media::record {

// What the final file holds in front of the copied tags besides the onMetaData body: the FLV
// header, PreviousTagSize0, the script tag header and its PreviousTagSize.
inline constexpr size_t kFinalHeadOverhead =
    kFlvFileHeaderSize + kFlvPreviousTagSizeSize + kFlvTagHeaderSize + kFlvPreviousTagSizeSize;

struct FinalMetadataFacts {
  uint32_t duration_ms = 0;
  uint32_t last_timestamp_ms = 0;
  bool has_audio = false;
  bool has_video = false;
  uint64_t tags_size = 0;  // bytes of the tags that follow the head in the final file
  // Seek points, tag_offset counted from the first byte after the head.
  std::vector<KeyframeRef> keyframes;
};

// The body of the final file's onMetaData tag: "onMetaData" and an ECMA array holding every
// property of `original` (the recording's own onMetaData body; empty or undecodable means none),
// with these set (replacing the original's value in place, or appended in this order):
//   duration (s), filesize (bytes of the final file), hasVideo, hasKeyframes, hasAudio,
//   hasMetadata, canSeekToEnd, lasttimestamp (s), lastkeyframetimestamp (s),
//   lastkeyframelocation (byte offset), and last `keyframes`: an object of two strict arrays of
//   numbers, filepositions (offsets of the keyframe tags in the final file) then times (s).
// Positions depend on the body's size and not the reverse (AMF0 numbers are fixed-width doubles),
// so it is encoded once to learn its size and once with the real positions.
// The body always fits a tag (kFlvMaxDataSize): the keyframe index is thinned evenly if needed,
// and the original's properties are dropped if they alone would not fit.
std::vector<uint8_t> build_final_metadata(std::span<const uint8_t> original, const FinalMetadataFacts& facts);

}  // namespace sluice::media::record
