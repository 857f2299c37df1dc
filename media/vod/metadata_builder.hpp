// Builds the onMetaData a player receives first for a file that has none of its own (every MP4,
// and FLV files written without one). Players use it for the duration (seek bar), the picture
// size and to pick decoders before the sequence headers arrive.
#pragma once

#include <cstdint>
#include <vector>

#include "media/vod/media_index.hpp"

namespace sluice::media::vod {

// AMF0 string "onMetaData" followed by an ECMA array with duration (s), width, height, framerate,
// videocodecid (7 for H.264, the 'hvc1' FourCC number for HEVC, as Enhanced RTMP says),
// videodatarate, audiocodecid (10 AAC, 2 MP3), audiosamplerate, audiosamplesize, stereo,
// audiodatarate (kbit/s), filesize and canSeekToEnd. Fields for an absent track are left out.
// Computed from the index's samples, so call it once they are final.
std::vector<uint8_t> build_on_metadata(const MediaIndex& index);

}  // namespace sluice::media::vod
