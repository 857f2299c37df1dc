// Sample: one FLV-style tag of a media file (an audio frame, a video frame or a script tag), as the
// file indexers (vod::FlvIndexer, vod::Mp4Demuxer over mp4/'s sample tables) describe it, and as
// the recording code (record/) reads it back. Samples are kept for the whole life of an index,
// shared by every player of the file, so they are small plain values: a 2-hour movie has about
// 400 000 of them.
//
// Not the same idea as hls/sample.hpp's hls::Sample: that one is a frame in memory (its bytes, in
// 90 kHz ticks, with a duration) on its way into a TS or fMP4 muxer; this one is a place in a file.
#pragma once

#include <cstdint>

namespace sluice::media {

inline constexpr uint8_t kSampleAudio = 8;
inline constexpr uint8_t kSampleVideo = 9;
inline constexpr uint8_t kSampleScript = 18;

struct Sample {
  // Where the sample's bytes are in the file. For FLV that is the tag body (what an RTMP message
  // carries); for MP4 the raw sample, to which tag_prefix() adds the FLV codec header.
  uint64_t file_offset = 0;
  uint32_t size = 0;
  uint32_t dts_ms = 0;           // decode time, the RTMP message timestamp
  int32_t cts_ms = 0;            // composition offset: pts = dts + cts (video only; 0 otherwise)
  uint8_t type = 0;              // kSampleAudio, kSampleVideo or kSampleScript (the FLV tag type)
  bool keyframe = false;         // a video frame a decoder can start on
  bool sequence_header = false;  // codec configuration inside the stream (FLV files only)
};
// 24 bytes: 400k samples cost under 10 MB per file, whatever the number of players.
static_assert(sizeof(Sample) == 24, "keep Sample compact: it is stored once per frame of every indexed file");

// A seek point: the sample number of a video keyframe and its decode time.
struct Keyframe {
  uint32_t sample = 0;
  uint32_t time_ms = 0;
};

// A byte range of the file: what an indexer asks the caller to read, or what a player must read
// to get a run of samples.
struct ByteRange {
  uint64_t offset = 0;
  uint64_t size = 0;
  uint64_t end() const { return offset + size; }
};

}  // namespace sluice::media
