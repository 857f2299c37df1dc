// Turns the payload of an MP4 'moov' box into a MediaIndex: the first playable video track and
// the first playable audio track, their samples merged in decode order, sequence headers and an
// onMetaData built from the codec configuration.
#pragma once

#include <cstdint>
#include <span>

#include "media/mp4/mp4_sample_table.hpp"
#include "media/vod/media_index.hpp"
#include "base/result.hpp"

namespace sluice::media::vod {

// `moov_payload` is the box without its header; `file_size` bounds sample offsets (samples past
// it end their track: a truncated file plays up to where it stops).
// Errors: Errc::Unsupported for fragmented MP4 (an mvex box) and for movies with no H.264/HEVC
// video and no AAC/MP3 audio track; Errc::Malformed / Truncated / LimitExceeded for broken or
// hostile boxes (never a crash, never an allocation larger than the tables justify).
// `max_samples` (at most kMaxMp4Samples) bounds the samples of both tracks together.
Result<MediaIndex> parse_mp4_movie(std::span<const uint8_t> moov_payload, uint64_t file_size,
                                   uint32_t max_samples = mp4::kMaxMp4Samples);

}  // namespace sluice::media::vod
