// One MP4 track (trak box) as the demuxer needs it: handler, timescale, edit list, codec setup
// and the spans of its sample table boxes (which point into the moov bytes).
#pragma once

#include <cstdint>
#include <optional>

#include "media/mp4/box_reader.hpp"
#include "media/mp4/mp4_sample_entry.hpp"
#include "media/mp4/mp4_sample_table.hpp"
#include "base/result.hpp"

namespace sluice::media::mp4 {

// Edit list values further than this from 0 (about 12 days) are ignored as nonsense; the bound
// also keeps the shift arithmetic far from 64-bit overflow.
inline constexpr uint64_t kMaxEditSeconds = uint64_t{1} << 20;

struct Mp4Track {
  uint32_t handler = 0;    // kHandlerVideo or kHandlerAudio
  uint32_t timescale = 0;  // mdhd, non-zero
  // The basic edit list: leading empty edits (movie timescale) delay the track, the first real
  // edit's media_time (track timescale) is the media time presented first.
  uint64_t empty_edit = 0;
  int64_t media_time = 0;
  CodecSetup codec;
  SampleTables tables;

  // Track units to add to every decode time: empty edits minus media_time. 0 when the movie
  // timescale is unknown for the empty part.
  int64_t shift(uint32_t movie_timescale) const;
};

// What the caller still lacks; tracks of another kind are skipped without being parsed, so a
// broken subtitle or second video track cannot fail the file.
struct TrackWanted {
  bool video = true;
  bool audio = true;
};

// Parses `trak` (produced by `walker`). nullopt for a track that is not wanted (another handler,
// a kind already found, a codec Sluice cannot send to an RTMP player). Errors for a wanted track
// whose boxes are malformed or that lacks a mandatory table.
Result<std::optional<Mp4Track>> parse_track(const Box& trak, const BoxWalker& walker, TrackWanted wanted);

}  // namespace sluice::media::mp4
