// Fragmented MP4 for HLS (fMP4 segments and LL-HLS parts): the initialization segment of a stream
// and its fragments, as bytes, from the track setup and samples of media/hls/sample.hpp. No I/O,
// no state: the segmenter decides what goes into which fragment and numbers them.
//
// Layout (ISO/IEC 14496-12 section names; 14496-15 for the AVC/HEVC sample entries, 14496-14 for
// esds):
//   init:      ftyp, moov { mvhd, trak per track { tkhd, mdia { mdhd, hdlr, minf { vmhd|smhd, dinf,
//              stbl { stsd, stts, stsc, stsz, stco } } } }, mvex { trex per track } }
//   fragment:  moof { mfhd, traf per track with samples { tfhd, tfdt, trun } }, mdat
// Choices:
//  1. File Type Box: major 'iso6', compatible 'iso6' 'mp41'. Not 'cmfc': a CMAF fragment holds one
//     track, and ours carry audio and video in one moof. The fragment features used (tfdt, trun
//     version 1, default-base-is-moof) are not in the oldest brands; 'mp41' for MP4 readers.
//  2. Both tracks use the 90 kHz clock of the samples as their Media Header Box timescale, so times
//     are copied, never rescaled or rounded. The movie is empty (Sample Table Boxes with no entries;
//     Movie and Track Header durations 0) and has no edit list: a presentation time is dts + cts.
//  3. Track Fragment Header Box: default-base-is-moof, so each Track Fragment Run Box's
//     data_offset counts from the first byte of its moof and a fragment can be moved or
//     concatenated as is (what an LL-HLS part and the segment made of its parts need).
//  4. Track Fragment Base Media Decode Time Box, version 1 (64 bits: a stream may run for years),
//     holds the first sample's dts; the later decode times are the durations summed, so the dts of
//     every sample but the first are implied by the durations the caller gives.
//  5. Track Fragment Run Box: video version 1 with per-sample duration, size, flags and a signed
//     composition offset; audio with duration and size only, its flags (sync, depends on no other
//     sample) given once as the tfhd default_sample_flags. The Track Extends Box defaults are all 0:
//     every fragment states what it needs and does not depend on the init segment.
//  6. One mdat per fragment, video samples first, then audio, each as given (AVCC NAL units, raw
//     AAC). Sizes are computed before any byte is written: a fragment past kMaxFragmentBytes (a
//     data_offset is a signed 32-bit field) is refused, never written with a wrong size.
//  7. Every date is 0 and every name a constant, so the same input always gives the same bytes.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "media/hls/sample.hpp"

namespace sluice::media::fmp4 {

inline constexpr uint32_t kVideoTrackId = 1, kAudioTrackId = 2;

// A Track Fragment Run Box data_offset is an int32 counted from the moof's first byte, and the
// audio run starts after all the video bytes: the whole fragment must fit it.
inline constexpr uint64_t kMaxFragmentBytes = 0x7FFFFFFF;
// A codec configuration record (avcC, hvcC) or AudioSpecificConfig bigger than this is no real
// one (they are tens of bytes, a few KB with many parameter sets); it also keeps the esds
// descriptor sizes inside their 28-bit field.
inline constexpr size_t kMaxConfigBytes = 1u << 20;

// Sample flags (the Track Extends Box's sample_flags layout).
inline constexpr uint32_t kFlagsSync = 0x02000000;     // sample_depends_on = 2 (an I picture)
inline constexpr uint32_t kFlagsNonSync = 0x01010000;  // sample_depends_on = 1, is_non_sync_sample

// The initialization segment: ftyp + moov, one trak per present track (video id kVideoTrackId,
// audio id kAudioTrackId; the sample entry avc1+avcC, hvc1+hvcC or mp4a+esds carries `config`).
// Empty (refused) when no track is present, a track's codec does not belong to its slot (video:
// Avc or Hevc; audio: Aac), or a config is larger than kMaxConfigBytes. An empty config is written
// as it is (an empty avcC/hvcC, an esds without DecoderSpecificInfo).
std::vector<uint8_t> init_segment(const hls::StreamSetup& setup);

// One fragment: moof (mfhd with `sequence`, a traf per non-empty span) then one mdat holding the
// video sample bytes, then the audio ones. The spans say the track (Sample::video is not looked
// at); keyframe is used for video only, cts for video only. Empty (refused) when both spans are
// empty or the fragment would exceed kMaxFragmentBytes.
std::vector<uint8_t> fragment(uint32_t sequence, std::span<const hls::Sample> video,
                              std::span<const hls::Sample> audio);

}  // namespace sluice::media::fmp4
