// MediaIndex: everything a VOD player needs to know about one file, built once by FlvIndexer or
// Mp4Demuxer and then shared, immutable, by every player of that file.
//
// Playing a file with it:
//  1. Send `metadata` (an AMF0 "onMetaData" data message), then `video_sequence_header` and
//     `audio_sequence_header` (when not empty) with timestamp 0.
//  2. Pick the first sample: 0, or seek(start_ms). After a seek, also resend the in-stream sequence
//     headers that precede it: last_sequence_header(first, type) (FLV files that change codec
//     configuration mid-stream; usually there are none).
//  3. Repeatedly plan_read(next, end, budget), read that byte range of the file (off the event
//     loop), and for each sample of the plan send tag_prefix() + ReadPlan::sample_bytes() as one
//     RTMP message of the sample's type with timestamp dts_ms (tag_body.hpp).
// Samples are in sending order: decode order, audio and video interleaved. For MP4 that is sorted
// by decode time; for FLV it is the file's own tag order (which is what FLV writers intend).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "media/codec/flv_audio.hpp"
#include "media/codec/flv_video.hpp"
#include "media/sample.hpp"
#include "base/result.hpp"

namespace sluice::media::vod {

// The index's sample types are media/sample.hpp's (mp4/ and record/ use them too); named here as
// well, for the VOD code that knows them as vod::Sample, vod::ByteRange, vod::kSampleVideo...
using media::ByteRange;
using media::Keyframe;
using media::kSampleAudio;
using media::kSampleScript;
using media::kSampleVideo;
using media::Sample;

enum class Container : uint8_t { Flv, Mp4 };

// Samples [first, end) of an index and the one file range that holds all of their bytes.
struct ReadPlan {
  ByteRange bytes;
  uint32_t first = 0;
  uint32_t end = 0;

  // The bytes of sample `s` (one of [first, end)) inside `buffer`, the bytes read for this plan.
  // Errc::Truncated when the buffer is too short (the file shrank since it was indexed).
  Result<std::span<const uint8_t>> sample_bytes(std::span<const uint8_t> buffer, const Sample& s) const;
};

struct MediaIndex {
  Container container = Container::Flv;
  uint64_t file_size = 0;
  uint32_t duration_ms = 0;

  std::vector<Sample> samples;
  std::vector<Keyframe> keyframes;  // video keyframes, ascending time
  // Sample numbers (ascending) of sequence headers that stay in `samples` because they change the
  // configuration mid-stream. The initial ones are not samples: they are the fields below.
  std::vector<uint32_t> sequence_header_samples;

  // FLV tag bodies, sent before the first frame: AVC 0x17 0x00 + CTS 0 + avcC, Enhanced RTMP
  // HEVC 0x90 'hvc1' + hvcC, AAC 0xAF 0x00 + AudioSpecificConfig. Empty when there is none
  // (MP3, codecs without configuration, or no such track).
  std::vector<uint8_t> video_sequence_header;
  std::vector<uint8_t> audio_sequence_header;
  // AMF0 "onMetaData" + ECMA array: the file's own for FLV, built for MP4 (metadata_builder.hpp).
  std::vector<uint8_t> metadata;

  // Codec facts. For MP4 they drive tag_prefix(); for FLV they are informational only.
  bool has_video = false;
  bool has_audio = false;
  VideoCodec video_codec = VideoCodec::Unknown;
  AudioCodec audio_codec = AudioCodec::Unknown;
  uint32_t width = 0;
  uint32_t height = 0;
  uint32_t audio_sample_rate = 0;
  uint8_t audio_channels = 0;

  // The sample to start playing at for a start time: the video keyframe at or before `ms` (the
  // first keyframe when `ms` precedes it); for files without video keyframes, the last sample at
  // or before `ms`. 0 when there are no samples.
  uint32_t seek(uint32_t ms) const;

  // The latest in-stream sequence header of `type` before sample `before`, if any.
  std::optional<uint32_t> last_sequence_header(uint32_t before, uint8_t type) const;

  // Samples [first, plan.end) with plan.end <= end, chosen so that their bytes lie in one range of
  // at most max_bytes (the first sample alone may exceed it: it is always included when
  // first < end). In a well-interleaved file consecutive samples are adjacent, so one read serves
  // many of them; in a badly interleaved one the plan shrinks rather than reading far-away bytes.
  ReadPlan plan_read(uint32_t first, uint32_t end, uint64_t max_bytes) const;

  // Heap bytes this index holds (for stats and the per-file memory figure).
  size_t memory_bytes() const;
};

}  // namespace sluice::media::vod
