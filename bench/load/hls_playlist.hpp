// HLS media playlist reader for the bench's HLS readers: the tags a live reader needs (RFC 8216
// and its low-latency extensions, RFC 8216bis), nothing more. Master playlists, keys, byte ranges
// and rendition groups are not read: the bench reads one media playlist of one server.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::bench {

struct PlaylistPart {
  std::string uri;
  double duration_s = 0;
  bool independent = false;
};

struct PlaylistSegment {
  uint64_t msn = 0;
  std::string uri;  // empty while the segment is being written (only its parts are listed)
  double duration_s = 0;
  int64_t pdt_ms = -1;  // EXT-X-PROGRAM-DATE-TIME, ms since the epoch; -1 without one
  std::string map_uri;  // the EXT-X-MAP in force for this segment (fMP4), empty for MPEG-TS
  std::vector<PlaylistPart> parts;
  bool complete() const { return !uri.empty(); }
};

struct MediaPlaylist {
  double target_s = 0;
  double part_target_s = 0;     // EXT-X-PART-INF; 0 without low latency
  double part_hold_back_s = 0;  // EXT-X-SERVER-CONTROL PART-HOLD-BACK
  bool can_block_reload = false;
  bool can_skip = false;  // CAN-SKIP-UNTIL present
  uint64_t media_sequence = 0;
  uint64_t skipped = 0;  // EXT-X-SKIP: segments left out of a delta update
  bool ended = false;    // EXT-X-ENDLIST
  std::string preload_hint_uri;
  // The listed segments, the first one having msn media_sequence + skipped.
  std::vector<PlaylistSegment> segments;

  bool low_latency() const { return part_target_s > 0; }
  // The segment with this media sequence number, or null when it is not listed.
  const PlaylistSegment* find(uint64_t msn) const;
  // The next media sequence number after the listed segments (the one being written counts).
  uint64_t end_msn() const { return media_sequence + skipped + segments.size(); }
};

// Parses a media playlist. Errors (no #EXTM3U, a bad number) give nullopt and `error` says why.
std::optional<MediaPlaylist> parse_media_playlist(std::string_view text, std::string& error);

// Resolves a URI of the playlist against the playlist's request target ("/live/cam/index.m3u8?k=1"):
// an absolute path is kept, "http://host/path" gives its path, a relative one replaces the last
// path segment.
std::string resolve_uri(std::string_view playlist_target, std::string_view uri);

// "2026-12-01T14:02:03.456Z" (or with a +hh:mm offset) -> ms since the epoch; -1 when unreadable.
int64_t parse_iso8601_ms(std::string_view text);

}  // namespace sluice::bench
