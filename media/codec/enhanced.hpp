// Enhanced RTMP pieces shared by the audio and video tag parsers: ModEx blocks and the
// multitrack track walk (docs/protocol.md, "Multitrack" and "ModEx"). Offsets are relative to the
// whole tag body.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "base/byte_io.hpp"
#include "base/result.hpp"

namespace sluice::media {

enum class AvMultitrackType : uint8_t { OneTrack = 0, ManyTracks = 1, ManyTracksManyCodecs = 2 };

// ModExType 0: UI24 nanoseconds added to the message's millisecond timestamp.
inline constexpr uint8_t kModExTimestampOffsetNano = 0;

// One track's share of a tag body.
struct TrackData {
  uint8_t id = 0;                // 0 = default track
  uint32_t fourcc = 0;           // 0 for legacy codecs that have none
  int32_t composition_time = 0;  // ms, pts = dts + composition_time
  size_t data_offset = 0;        // codec payload (config record, NALUs, OBUs, raw audio)
  size_t data_size = 0;
};

// The tracks of one message. A message may carry up to 256 tracks; all are bounds-checked but
// only the first kMaxStored are kept, so parsing never allocates (it runs once per ingested frame).
struct TrackList {
  static constexpr size_t kMaxStored = 8;
  std::array<TrackData, kMaxStored> items{};
  size_t stored = 0;
  size_t total = 0;

  void add(const TrackData& t) {
    if (stored < kMaxStored) items[stored++] = t;
    ++total;
  }
  const TrackData* first() const { return stored ? &items[0] : nullptr; }
};

// How the tracks of a message are laid out, as read from its header.
struct TrackLayout {
  bool multitrack = false;
  AvMultitrackType type = AvMultitrackType::OneTrack;
  uint32_t fourcc = 0;    // shared FourCC (unused for ManyTracksManyCodecs)
  bool nalu_cts = false;  // CodedFrames of avc1/hvc1/vvc1: each track starts with an SI24 CTS
};

// Reads one ModEx block; `r` is positioned just after the nibble that said ModEx. Returns the
// packet type that follows (which may be ModEx again). Unknown ModEx types are skipped.
Result<uint8_t> read_modex(ByteReader& r, uint32_t& timestamp_offset_nanos);

// Walks every track of the message from `r`'s position to the end, checking each size against
// what remains, so that a lying sizeOfTrack cannot make anyone read past the payload.
Result<void> read_tracks(ByteReader& r, const TrackLayout& layout, TrackList& out);

}  // namespace sluice::media
