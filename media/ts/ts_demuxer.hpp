// TsDemuxer: an MPEG-TS byte stream (ISO/IEC 13818-1), as an SRT publisher sends it (docs/srt.md),
// to the canonical frames the hub takes (media/frame.hpp: an FLV tag's type and body, a
// millisecond timestamp). Sans I/O: bytes in, frames out.
//
// Rules:
//  1. The first program of the PAT; of its PMT, the first H.264 or HEVC stream and the first AAC
//     (ADTS) or MPEG audio stream. Other streams and PIDs are ignored and keep no state. A PMT that
//     changes a track's PID or stream type starts that track anew.
//  2. A PES ends at the next payload_unit_start on its PID, or as soon as PES_packet_length bytes
//     have come (audio, whose length is exact, leaves without waiting for the next frame).
//  3. Timestamps: one clock for the program. The first PTS or DTS seen becomes 1000 ms (room for a
//     track that starts a little earlier, as video with B-frames does); 33-bit values are unwrapped
//     to 64 bits against the last one seen. A frame's timestamp is its DTS (or PTS) in ms, the
//     composition offset PTS - DTS.
//  4. Continuity: a payload packet whose counter is not the next one drops the PES being
//     assembled on its PID (counted); a repeated packet (the same counter) is ignored; a
//     discontinuity_indicator resets the expectation. Damaged (transport_error_indicator) and
//     scrambled packets are dropped and counted.
//  5. Video goes through NalPacker (media/codec/nal_packer.hpp: the sequence header from the
//     in-band parameter sets). Each AAC frame of a PES becomes a frame, at PTS + n x 1024 samples,
//     behind a sequence header made from its ADTS header whenever that changes. MPEG audio is passed
//     as FLV MP3, one tag per PES.
//  6. An error ends the source (the caller drops the connection with a log line): lost sync (a
//     packet that does not start with 0x47), an adaptation field past its packet, a PES longer
//     than Limits::max_pes_bytes. What Stats counts is not an error: the stream goes on.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "base/result.hpp"
#include "media/codec/flv_audio.hpp"
#include "media/codec/nal_packer.hpp"
#include "media/ts/adts.hpp"
#include "media/ts/ts_packet.hpp"

namespace sluice::media::ts {

class TsDemuxer {
 public:
  struct Frame {
    uint8_t type = 0;  // FLV tag type: 8 audio, 9 video
    uint32_t timestamp = 0;
    std::vector<uint8_t> body;
  };
  struct Stats {
    uint64_t packets = 0;
    uint64_t continuity_errors = 0;
    uint64_t damaged_packets = 0;  // transport_error_indicator or scrambled
    uint64_t bad_pes = 0;          // no start code, no PTS, bad marker bits
    uint64_t dropped_frames = 0;   // before the first sequence header, nothing to decode, not ADTS
    uint64_t bad_sections = 0;     // PSI sections with a wrong CRC or length
  };
  struct Limits {
    size_t max_pes_bytes = size_t{4} << 20;  // a 4 MiB access unit is far past any live encoder's keyframe
  };

  TsDemuxer() = default;
  explicit TsDemuxer(Limits limits) : limits_(limits) {}

  // Any number of bytes (whole packets or not); the frames they complete are appended to `out`.
  Result<void> feed(std::span<const uint8_t> bytes, std::vector<Frame>& out);
  // The source ended: the PES packets still open (an unbounded video PES ends only at the next).
  void flush(std::vector<Frame>& out);

  VideoCodec video_codec() const;
  AudioCodec audio_codec() const;
  Stats stats() const;

 private:
  struct Track {
    uint16_t pid = 0x1FFF;  // none
    uint8_t stream_type = 0;
    int last_continuity = -1;
    bool collecting = false;  // a PES has begun and arrived whole so far
    size_t expected = 0;      // its whole size once PES_packet_length says it; 0 unbounded
    std::vector<uint8_t> pes;
  };

  Result<void> packet(std::span<const uint8_t> bytes, std::vector<Frame>& out);
  void tables(const TsPacket& p, std::vector<Frame>& out);
  void apply_pmt(const ProgramMap& pmt, std::vector<Frame>& out);
  Result<void> track_packet(Track& t, const TsPacket& p, std::vector<Frame>& out);
  void finish_pes(Track& t, std::vector<Frame>& out);
  void video(std::span<const uint8_t> data, int64_t dts, int64_t pts, std::vector<Frame>& out);
  void aac(std::span<const uint8_t> data, int64_t pts, std::vector<Frame>& out);
  int64_t unwrap(uint64_t ts33);
  uint32_t ms(int64_t ticks) const;

  Limits limits_;
  Stats stats_;
  std::vector<uint8_t> carry_;  // the start of a packet the last feed() ended in
  SectionReader pat_reader_;
  SectionReader pmt_reader_;
  uint16_t pmt_pid_ = 0x1FFF;
  Track video_;
  Track audio_;
  std::optional<NalPacker> packer_;
  std::optional<AdtsConfig> adts_;  // the last AAC sequence header's
  std::vector<NalPacker::Body> bodies_;
  std::vector<std::vector<uint8_t>> sections_;
  bool have_clock_ = false;
  int64_t base_ = 0;  // 90 kHz ticks that are 0 ms
  int64_t last_ = 0;  // the last timestamp seen, unwrapped
};

}  // namespace sluice::media::ts
