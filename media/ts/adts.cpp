#include "media/ts/adts.hpp"

#include <algorithm>
#include <optional>

#include "media/codec/aac.hpp"

namespace sluice::media::ts {

namespace {

constexpr uint32_t kSampleRates[13] = {96000, 88200, 64000, 48000, 44100, 32000, 24000,
                                       22050, 16000, 12000, 11025, 8000,  7350};
constexpr uint8_t kExplicitRate = 15;
constexpr uint8_t kMaxAdtsChannelConfig = 7;

uint8_t adts_profile(uint8_t object_type) { return static_cast<uint8_t>(std::clamp<int>(int{object_type} - 1, 0, 3)); }

// What ADTS needs of an AudioSpecificConfig: the core's object type and rate (rules 1 and 2).
std::optional<AdtsConfig> parse_asc(std::span<const uint8_t> asc) {
  auto aac = parse_aac_config(asc);
  if (!aac) return std::nullopt;
  AdtsConfig c;
  c.profile = adts_profile(aac->core_object_type);
  c.sampling_index =
      aac->sampling_index != kExplicitRate ? aac->sampling_index : nearest_sampling_index(aac->core_sample_rate);
  c.channel_config = aac->channel_config <= kMaxAdtsChannelConfig ? aac->channel_config : 0;
  return c;
}

}  // namespace

uint8_t nearest_sampling_index(uint32_t rate) {
  uint8_t best = 0;
  uint32_t best_distance = UINT32_MAX;
  for (uint8_t i = 0; i < 13; ++i) {
    const uint32_t d = rate > kSampleRates[i] ? rate - kSampleRates[i] : kSampleRates[i] - rate;
    if (d < best_distance) {
      best = i;
      best_distance = d;
    }
  }
  return best;
}

AdtsConfig adts_config(const hls::TrackSetup& audio) {
  if (auto c = parse_asc(audio.config)) return *c;
  AdtsConfig c;  // rule 4
  if (audio.object_type != 0) c.profile = adts_profile(audio.object_type);
  if (audio.sample_rate != 0) c.sampling_index = nearest_sampling_index(audio.sample_rate);
  if (audio.channels >= 1 && audio.channels <= 6) c.channel_config = audio.channels;
  if (audio.channels == 8) c.channel_config = 7;
  return c;
}

std::array<uint8_t, kAdtsHeaderSize> adts_header(const AdtsConfig& c, size_t payload) {
  const size_t len = std::min(payload, kMaxAdtsPayload) + kAdtsHeaderSize;
  constexpr uint32_t kVariableRate = 0x7FF;  // adts_buffer_fullness
  return {
      0xFF,
      0xF1,  // syncword end, ID 0 (MPEG-4), layer 0, protection_absent 1
      static_cast<uint8_t>((c.profile & 3) << 6 | (c.sampling_index & 0x0F) << 2 | (c.channel_config >> 2 & 1)),
      static_cast<uint8_t>((c.channel_config & 3) << 6 | (len >> 11 & 3)),
      static_cast<uint8_t>(len >> 3 & 0xFF),
      static_cast<uint8_t>((len & 7) << 5 | kVariableRate >> 6),
      static_cast<uint8_t>((kVariableRate & 0x3F) << 2),  // number_of_raw_data_blocks_in_frame 0
  };
}

std::optional<AdtsFrame> read_adts_frame(std::span<const uint8_t> d) {
  if (d.size() < kAdtsHeaderSize || !starts_with_adts(d) || (d[1] & 0x06) != 0) return std::nullopt;
  AdtsFrame f;
  f.header_size = (d[1] & 0x01) ? kAdtsHeaderSize : kAdtsHeaderSize + 2;
  f.config.profile = static_cast<uint8_t>(d[2] >> 6);
  f.config.sampling_index = static_cast<uint8_t>((d[2] >> 2) & 0x0F);
  f.config.channel_config = static_cast<uint8_t>((d[2] & 0x01) << 2 | d[3] >> 6);
  f.frame_size = size_t(d[3] & 0x03) << 11 | size_t(d[4]) << 3 | d[5] >> 5;
  if (sampling_rate(f.config.sampling_index) == 0 || f.frame_size < f.header_size || f.frame_size > d.size())
    return std::nullopt;
  return f;
}

uint32_t sampling_rate(uint8_t index) { return index < 13 ? kSampleRates[index] : 0; }

std::array<uint8_t, 2> audio_specific_config(const AdtsConfig& c) {
  const uint8_t object_type = static_cast<uint8_t>(c.profile + 1);
  return {static_cast<uint8_t>(object_type << 3 | c.sampling_index >> 1),
          static_cast<uint8_t>((c.sampling_index & 1) << 7 | (c.channel_config & 0x0F) << 3)};
}

}  // namespace sluice::media::ts
