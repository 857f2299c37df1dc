// HLS media playlists (RFC 8216, and RFC 8216bis for Low-Latency HLS) rendered from the
// segmenter's segments (segmenter.hpp). Pure text: the server decides when to answer.
//
// URIs are relative to the playlist: seg<msn>.ts / seg<msn>.m4s, part<msn>.<index>.m4s (or .ts),
// init<id>.mp4; `query` (a signed URL's parameters) is appended to each so that the media
// requests carry what the playlist request carried.
//
// Rules:
//  1. The last `window` complete segments are listed, then (low latency) the parts of the
//     segment being written and a preload hint for its next part. The extra segment the
//     segmenter keeps is not listed.
//  2. Low latency lists the parts of the segments that end less than three target durations from
//     the end, and the server control says CAN-BLOCK-RELOAD, PART-HOLD-BACK (three part targets)
//     and CAN-SKIP-UNTIL (six target durations). A delta update (`skip`) replaces the segments
//     more than CAN-SKIP-UNTIL from the end with EXT-X-SKIP, but never skips past a
//     discontinuity or a change of initialization segment.
//  3. Every segment has its program date-time; EXT-X-MAP comes before the first listed segment
//     and again wherever the initialization segment changes.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "media/hls/part_writer.hpp"
#include "media/hls/segmenter.hpp"

namespace sluice::media::hls {

struct PlaylistParams {
  Container container = Container::Fmp4;
  bool low_latency = false;
  uint32_t part_ms = 0;
  uint32_t window = 6;
  uint32_t target_s = 2;
  uint64_t discontinuity_sequence = 0;
  bool skip = false;  // _HLS_skip=YES: a delta update
  std::string query;  // without '?'; empty for none
};

std::string render_playlist(std::span<const Segment> segments, const PlaylistParams& p);

// What a blocking playlist request (_HLS_msn, _HLS_part) waits for.
enum class BlockAnswer : uint8_t { Ready, Wait, BadRequest };
// Ready when segment `msn` is complete, or (part >= 0) has part `part`; a part past the end of a
// complete segment is the next segment's first. BadRequest (RFC 8216bis 6.2.5.2) for an msn more
// than two past the last one, or a part further past the last part listed than the Advance Part
// Limit: 3 s of parts of `part_ms` (3 parts when they are 1 s or longer). Parts of segments not
// listed yet are not counted, so a request is never refused that could still come true soon.
BlockAnswer block_answer(std::span<const Segment> segments, uint64_t msn, int64_t part, uint32_t part_ms = 0);

// The segment or part a media URI names, parsed from its file name ("seg12.m4s", "part12.3.ts",
// "init2.mp4"); false for anything else.
struct MediaName {
  enum class Kind : uint8_t { Segment, Part, Init } kind = Kind::Segment;
  uint64_t msn = 0;  // Init: the id
  uint32_t part = 0;
};
bool parse_media_name(std::string_view file, Container container, MediaName& out);

// "2026-12-02T18:04:05.123Z"
std::string iso8601_utc(int64_t ms_since_epoch);

}  // namespace sluice::media::hls
