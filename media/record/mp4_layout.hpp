// The MP4 copy of a finished recording (`NAME.mp4` next to `NAME.flv`, with `mp4: true`): a
// faststart file (ftyp, moov, then mdat) holding the FLV's audio and video samples byte for byte.
// Sans-I/O and streaming: the builder sees each sample's first bytes only, and the layout says
// which bytes of the FLV to write after the head; the caller reads and writes them (like
// finalize_plan.hpp), so a recording of gigabytes is never held in memory.
//
// Lifecycle:
//  1. Index the finished FLV (vod::FlvIndexer) and construct an Mp4Builder with the index: it
//     takes the initial sequence headers and the picture size from it.
//  2. For every sample of index.samples, in order, get Mp4Builder::head_bytes(s) bytes of the FLV
//     from s.file_offset (the first 16 bytes of a frame, the whole body of a mid-stream sequence
//     header, nothing for script tags) and add() them with the sample. Any read that covers them
//     will do: one small read per sample, a large read shared by many, or the finalize copy that
//     wrote NAME.flv and saw every byte (the offsets are those of the finished file).
//  3. finish() once, to get the Mp4Layout.
//  4. Write `head` to a new file, then the FLV's bytes of each `copy` range, in order. The file is
//     then `final_size` bytes; sync it before announcing it.
//
// Rules:
//  1. An MP4 sample is an FLV tag body without its FLV codec header (media/flv/flv_tag_head.hpp lists
//     the forms), in the FLV's order: the mdat keeps the FLV's interleaving, and each run of
//     consecutive samples of one track is one chunk. Nothing else of the FLV is copied (onMetaData,
//     sequence headers, AVC end-of-sequence tags).
//  2. Tracks: the FLV's video if it is H.264 or HEVC, its audio if it is AAC or MP3. A track of
//     another codec (VP6, Speex, Nellymoser, Opus...) is left out and said so in `notes`. No track
//     left: Errc::Unsupported; no audio or video frame at all: Errc::Malformed.
//  3. A track starts at its codec configuration: the index's initial sequence header, else the
//     first one in the stream (frames before it are left out: no decoder could use them). A later
//     sequence header equal to the track's is ignored. A different one (or another codec) ends the
//     track there, and `notes` says so: the copy keeps one sample description per track (the
//     repo's MP4 demuxer reads only the first), and frames decoded with the wrong one would show
//     garbage. The FLV remains the complete recording.
//  4. Times are the FLV's milliseconds: the movie and both tracks have timescale 1000 (not the
//     audio sample rate: a live recording's audio has the gaps and jitter its FLV timestamps
//     describe, which 1024-sample durations would lose). The movie's time 0 is the earliest
//     decode time of its samples, which for a recording is the FLV's own 0 (its timestamps start
//     there), so that an FLV whose clock started elsewhere does not begin with hours of nothing.
//     pts = dts + cts as in the FLV: no edit list hides the B-frame delay. A track that starts
//     after the other is delayed by an empty edit. Decode times never go back
//     (mp4_sample_table.hpp rule 2); the last sample lasts as long as the one before it.
//  5. A track whose chunks lie past 4 GiB gets 64-bit chunk offsets (co64), and samples of more
//     than 4 GiB in all a 64-bit mdat size.
//  6. Memory while building: about 16 bytes per sample for `copy` and 10 to 30 for the sample
//     tables (run-length where the format allows), then the head itself, about as much as the
//     tables. More than `max_samples` samples (vod::kMaxFlvSamples by default): LimitExceeded.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "media/flv/flv_tag_head.hpp"
#include "media/mp4/mp4_sample_table_writer.hpp"
#include "media/vod/flv_indexer.hpp"
#include "media/vod/media_index.hpp"
#include "base/result.hpp"

namespace sluice::media::record {

struct Mp4Layout {
  std::vector<uint8_t> head;    // ftyp, moov and the mdat box header
  std::vector<ByteRange> copy;  // of the FLV, one per MP4 sample, in mdat order: the payload
  uint64_t final_size = 0;      // head.size() + the sizes of the copy ranges
  uint32_t video_samples = 0;
  uint32_t audio_samples = 0;
  uint32_t duration_ms = 0;  // the longest track, its delay included (rule 4)
  uint32_t left_out = 0;     // audio/video frames of the FLV that are not in the MP4
  // Why, one line each, for the log: "audio: Speex cannot go in an MP4; track left out (120
  // frames)". Empty when the MP4 has every frame.
  std::vector<std::string> notes;
};

class Mp4Builder {
 public:
  explicit Mp4Builder(const vod::MediaIndex& index, uint32_t max_samples = vod::kMaxFlvSamples);

  // The bytes of sample `s`'s tag body, from its start, that add() needs (never more than s.size).
  static uint32_t head_bytes(const Sample& s);

  // `s` is a sample of the index, as FlvIndexer made it; `head` its first head_bytes(s) bytes
  // (more are ignored). Errors: Errc::BadState when `head` is shorter or after finish(),
  // Errc::LimitExceeded past max_samples MP4 samples. After an error every call returns it again.
  Result<void> add(const Sample& s, std::span<const uint8_t> head);

  // The layout; errors as rule 2 says, or the add() error. Call it once.
  Result<Mp4Layout> finish();

 private:
  enum class State : uint8_t { Empty, WaitingConfig, Active, Stopped, Unsupported };

  struct Track {
    bool audio = false;
    State state = State::Empty;
    Mp4Codec codec = Mp4Codec::None;
    std::string codec_name;       // of an unsupported codec, for the note
    std::vector<uint8_t> config;  // avcC, hvcC or AudioSpecificConfig
    uint32_t width = 0;
    uint32_t height = 0;
    uint32_t sample_rate = 0;
    uint8_t channels = 0;
    uint8_t object_type = 0;
    mp4::Mp4SampleTable table;
    // Frames left out, by reason, for the notes.
    uint32_t before_config = 0;
    uint32_t after_stop = 0;
    uint32_t unsupported = 0;
    uint32_t unusable = 0;
    uint32_t stopped_at_ms = 0;
    std::string stop_reason;
  };

  void on_config(Track& t, const Sample& s, const FlvTagHead& p, std::span<const uint8_t> body);
  Result<void> on_frame(Track& t, const Sample& s, const FlvTagHead& p, std::span<const uint8_t> head);
  bool adopt_config(Track& t, Mp4Codec codec, std::span<const uint8_t> record);
  void stop(Track& t, uint32_t at_ms, std::string reason);
  Error fail(Error e);  // remembers it for every later call
  void note(const Track& t, Mp4Layout& layout) const;
  // The earliest decode time of the copy, its time 0 (rule 4), and the end of its longest track.
  uint32_t movie_start() const;
  uint64_t movie_duration() const;
  // The head with chunk offsets relative to the mdat payload; where they are goes to `tables`.
  void write_head(std::vector<uint8_t>& out, const bool co64[2], std::vector<mp4::ChunkOffsetTable>& tables) const;
  mp4::ChunkOffsetTable write_track(mp4::BoxWriter& b, const Track& t, uint32_t track_id, bool co64) const;

  uint32_t max_samples_;
  uint32_t index_width_;
  uint32_t index_height_;
  Track video_;
  Track audio_;
  std::vector<ByteRange> copy_;
  uint64_t mdat_payload_ = 0;
  bool seen_frame_ = false;
  bool finished_ = false;
  bool failed_ = false;
  Error error_;
};

// Steps 1 to 3 for a whole FLV file held in memory (tests, tools, fuzzing); `index` is its index.
// Errc::Truncated when a sample of the index lies outside `flv`.
Result<Mp4Layout> plan_mp4(const vod::MediaIndex& index, std::span<const uint8_t> flv);

// Step 4 in memory. `flv` must hold the bytes the layout was made from.
std::vector<uint8_t> apply_mp4_layout(const Mp4Layout& layout, std::span<const uint8_t> flv);

}  // namespace sluice::media::record
