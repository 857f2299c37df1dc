// AAC in MPEG-TS: each access unit behind a 7-byte ADTS header (ISO 14496-3 1.A.2.2,
// adts_fixed_header and adts_variable_header), as ISO/IEC 13818-1 stream type 0x0F
// ("ISO/IEC 13818-7 Audio with ADTS transport syntax") requires. ADTS has no room for an
// AudioSpecificConfig, so the header repeats its three fields in every frame.
//
// Rules:
//  1. profile is the audio object type - 1, clamped to 0..3 (ADTS knows Main, LC, SSR, LTP only).
//     For explicit SBR/PS signalling (object type 5 or 29) it is the core object type and the
//     core sampling rate, which is how HE-AAC travels in ADTS (implicit signalling: the decoder
//     finds the SBR data itself).
//  2. An explicit frequency (samplingFrequencyIndex 15) becomes the nearest standard index.
//  3. A channelConfiguration past 7 becomes 0 (defined in the stream), ADTS has 3 bits for it.
//  4. An ASC that does not parse falls back on the TrackSetup's object_type, sample_rate and
//     channels (LC, 44.1 kHz, stereo for those that are 0).
//  5. The 13-bit frame length bounds a frame to kMaxAdtsPayload bytes: a bigger access unit is
//     not AAC (6144 bits per channel at most) and has no ADTS form.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "media/hls/sample.hpp"

namespace sluice::media::ts {

inline constexpr size_t kAdtsHeaderSize = 7;
inline constexpr size_t kMaxAdtsPayload = 0x1FFF - kAdtsHeaderSize;

struct AdtsConfig {
  uint8_t profile = 1;         // object type - 1: 1 = LC
  uint8_t sampling_index = 4;  // 44100 Hz
  uint8_t channel_config = 2;
};

AdtsConfig adts_config(const hls::TrackSetup& audio);

// The standard samplingFrequencyIndex (0..12) closest to `rate`.
uint8_t nearest_sampling_index(uint32_t rate);

// The header of a frame with `payload` bytes of raw data (payload <= kMaxAdtsPayload): MPEG-4,
// no CRC, buffer fullness 0x7FF (variable rate), one raw data block.
std::array<uint8_t, kAdtsHeaderSize> adts_header(const AdtsConfig& c, size_t payload);

// Reading ADTS (an MPEG-TS source's audio, media/ts/ts_demuxer.hpp): one frame's header.
struct AdtsFrame {
  AdtsConfig config;
  size_t header_size = kAdtsHeaderSize;  // 9 with a CRC
  size_t frame_size = 0;                 // header included
};

// The frame at the start of `data`: nothing when there is no syncword, the layer is not 0, the
// sampling index is reserved, or its length is shorter than its header or runs past `data`.
std::optional<AdtsFrame> read_adts_frame(std::span<const uint8_t> data);
// The sampling rate of a standard samplingFrequencyIndex (0..12); 0 for another.
uint32_t sampling_rate(uint8_t index);
// The 2-byte AudioSpecificConfig an ADTS header stands for: object type profile + 1, its index
// and channels.
std::array<uint8_t, 2> audio_specific_config(const AdtsConfig& c);

// The 12-bit ADTS syncword: the sample is already ADTS (a raw AAC access unit cannot start
// with it: that would be an ID_END element first, an empty frame).
inline bool starts_with_adts(std::span<const uint8_t> data) {
  return data.size() >= 2 && data[0] == 0xFF && (data[1] & 0xF0) == 0xF0;
}

}  // namespace sluice::media::ts
