// TsMuxer: the MPEG-2 transport stream of an HLS rendition (ISO/IEC 13818-1), sans I/O: it only
// appends whole 188-byte packets to the caller's vector. One muxer lives for one publication of a
// stream, across all of its segments, so that continuity counters run on from one segment to the
// next (a player that reads segments back to back sees one stream).
//
// Format choices:
//  1. One program (program_number 1), PMT on kPmtPid, video on kVideoPid, audio on kAudioPid, the
//     PIDs most HLS packagers use. Tracks that are Codec::None are not in the PMT. Stream types
//     (13818-1 "Stream type assignments"): 0x1B H.264, 0x24 HEVC, 0x0F AAC in ADTS.
//  2. PAT and PMT ("Program association table", "Program map table") are one section each, in one
//     packet each (pointer_field 0, rest 0xFF), version 0, written by write_tables() only: the
//     segmenter calls it at the start of every segment, as HLS requires of a segment that a
//     player may start on. They have their own continuity counters.
//  3. One access unit is one PES packet ("PES packet"): stream_id 0xE0 video, 0xC0 audio,
//     data_alignment_indicator set (every PES starts with an AUD or an ADTS syncword), PTS always,
//     DTS only when it differs from the PTS, both modulo 2^33. Audio PTS is the sample's dts (its
//     cts is 0 by definition). PES_packet_length is exact for audio; for video it is exact when
//     it fits 16 bits and 0 ("unbounded", allowed for video only) otherwise.
//  4. The PCR ("Program clock reference") is on the video PID when there is video, else on the
//     audio PID, in the adaptation field of the first packet of every PES of that PID. Its base is
//     the PES's DTS and its extension 0: the clock then reads exactly the decode time when an
//     access unit starts to arrive. That is no valid T-STD buffer schedule, but HLS players
//     download whole segments and play by PTS; they only need PCR to be present and monotonic,
//     and DTS is both without any delay constant to choose.
//  5. random_access_indicator ("Adaptation field") on the first packet of every video keyframe
//     and of every audio access unit (each AAC frame decodes on its own).
//  6. The last packet of a PES is filled with adaptation field stuffing (0xFF), never with
//     payload padding, so the next PES starts a packet (payload_unit_start_indicator).
//  7. Video goes through AnnexB (annexb.hpp), audio through ADTS (adts.hpp). A sample that gives
//     nothing to decode (empty, no complete NAL unit, a track missing from the setup, an AAC frame
//     too long for ADTS) writes nothing and uses no continuity counter.
//
// Nothing throws; the only allocation is the growth of the output vector (and the parameter
// sets copied once at construction).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "media/hls/sample.hpp"
#include "media/ts/adts.hpp"
#include "media/ts/annexb.hpp"
#include "media/ts/ts_format.hpp"

namespace sluice::media::ts {

inline constexpr uint16_t kPatPid = 0x0000;
inline constexpr uint16_t kPmtPid = 0x1000;
inline constexpr uint16_t kVideoPid = 0x0100;
inline constexpr uint16_t kAudioPid = 0x0101;
inline constexpr uint16_t kNoPcrPid = 0x1FFF;  // PCR_PID of a program without PCR
inline constexpr uint16_t kProgramNumber = 1;
inline constexpr uint16_t kTransportStreamId = 1;

inline constexpr uint8_t kVideoStreamId = 0xE0;
inline constexpr uint8_t kAudioStreamId = 0xC0;

class TsMuxer {
 public:
  explicit TsMuxer(const hls::StreamSetup& setup);

  // PAT + PMT, one packet each (rule 2).
  void write_tables(std::vector<uint8_t>& out);
  // One access unit as one PES packet, appended to `out` as whole 188-byte packets (rules 3-7).
  void write_sample(const hls::Sample& s, std::vector<uint8_t>& out);

  uint16_t pcr_pid() const { return pcr_pid_; }

 private:
  void write_video(const hls::Sample& s, std::vector<uint8_t>& out);
  void write_audio(const hls::Sample& s, std::vector<uint8_t>& out);

  hls::Codec video_codec_;
  hls::Codec audio_codec_;
  AnnexB annexb_;
  AdtsConfig adts_;
  uint16_t pcr_pid_;
  uint8_t pat_cc_ = 0;
  uint8_t pmt_cc_ = 0;
  uint8_t video_cc_ = 0;
  uint8_t audio_cc_ = 0;
};

}  // namespace sluice::media::ts
