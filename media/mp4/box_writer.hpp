// Writing ISO BMFF (MP4) boxes for the MP4 copy of a recording (record/mp4_layout.hpp) and the
// fMP4 of HLS (fmp4/fmp4_writer.hpp): a writer that patches each box's size when the box is closed,
// and the fixed boxes of a faststart file (ftyp, mvhd, tkhd, elst, mdhd, hdlr, vmhd/smhd, dinf, the
// sample entries, the mdat header).
//
// Rules:
//  1. Every field that could carry a date or a name of this machine is written as 0 or a constant,
//     so the same FLV always gives the same bytes (tests compare them; ffmpeg -bitexact does the
//     same).
//  2. Boxes inside moov use 32-bit sizes: a moov is bounded by vod::kMaxFlvSamples samples of a
//     few tens of bytes each, far below 4 GiB. Only mdat may need a 64-bit largesize.
//  3. Durations and times pick the 64-bit box version only when they do not fit 32 bits.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "base/byte_io.hpp"

namespace sluice::media::mp4 {

// Appends boxes to a byte vector. begin() writes a header with a placeholder size; end() fills it
// in. Boxes nest by calling begin() again before end().
class BoxWriter {
 public:
  explicit BoxWriter(std::vector<uint8_t>& out) : out_(out), w_(out) {}

  size_t begin(uint32_t type);
  size_t begin_full(uint32_t type, uint8_t version, uint32_t flags);
  void end(size_t start);

  ByteWriter& w() { return w_; }
  size_t size() const { return out_.size(); }
  std::vector<uint8_t>& bytes() { return out_; }

 private:
  std::vector<uint8_t>& out_;
  ByteWriter w_;
};

// Closes the box it opened when it goes out of scope.
class BoxScope {
 public:
  BoxScope(BoxWriter& w, uint32_t type) : w_(w), start_(w.begin(type)) {}
  BoxScope(BoxWriter& w, uint32_t type, uint8_t version, uint32_t flags)
      : w_(w), start_(w.begin_full(type, version, flags)) {}
  ~BoxScope() { w_.end(start_); }
  BoxScope(const BoxScope&) = delete;
  BoxScope& operator=(const BoxScope&) = delete;

 private:
  BoxWriter& w_;
  size_t start_;
};

inline constexpr uint32_t kMp4Timescale = 1000;  // movie and media timescale: FLV times are ms

void write_ftyp(BoxWriter& b);
void write_mvhd(BoxWriter& b, uint64_t duration, uint32_t next_track_id);
// `width`/`height` are 0 for audio tracks.
void write_tkhd(BoxWriter& b, uint32_t track_id, uint64_t duration, bool audio, uint32_t width, uint32_t height);
// An edit list that starts the track `delay` ms after the movie: an empty edit, then the whole
// media (`media_duration`) from its time 0.
void write_edts(BoxWriter& b, uint64_t delay, uint64_t media_duration);
void write_mdhd(BoxWriter& b, uint64_t duration);
void write_hdlr(BoxWriter& b, bool audio);
// vmhd or smhd, then dinf with a self-contained data reference.
void write_media_header_and_dinf(BoxWriter& b, bool audio);

// VisualSampleEntry `entry_type` (avc1, hvc1) with its configuration box `config_type` (avcC,
// hvcC) holding `record`.
void write_visual_entry(BoxWriter& b, uint32_t entry_type, uint32_t config_type, std::span<const uint8_t> record,
                        uint32_t width, uint32_t height);

struct AudioEntry {
  uint8_t object_type = 0;            // esds objectTypeIndication: 0x40 AAC, 0x6B/0x69 MPEG audio
  std::span<const uint8_t> specific;  // DecoderSpecificInfo (the AudioSpecificConfig), or empty
  uint32_t sample_rate = 0;
  uint8_t channels = 0;
  uint32_t track_id = 0;
  uint32_t buffer_size = 0;  // the largest sample
  uint32_t max_bitrate = 0;  // bits per second
  uint32_t avg_bitrate = 0;
};
// An mp4a sample entry with its esds.
void write_mp4a_entry(BoxWriter& b, const AudioEntry& e);

// The mdat header for `payload` bytes: 8 bytes, or 16 with a largesize when the box would not fit
// a 32-bit size.
void write_mdat_header(std::vector<uint8_t>& out, uint64_t payload);

}  // namespace sluice::media::mp4
