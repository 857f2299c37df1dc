#include "media/codec/aac.hpp"

#include "media/codec/bit_reader.hpp"

namespace sluice::media {

namespace {

constexpr uint32_t kSampleRates[13] = {96000, 88200, 64000, 48000, 44100, 32000, 24000,
                                       22050, 16000, 12000, 11025, 8000,  7350};
constexpr uint8_t kChannels[8] = {0, 1, 2, 3, 4, 5, 6, 8};
constexpr uint8_t kObjectTypeLc = 2;
constexpr uint8_t kObjectTypeSbr = 5;
constexpr uint8_t kObjectTypePs = 29;
constexpr uint8_t kObjectTypeEscape = 31;
constexpr uint8_t kExplicitRate = 15;

uint8_t read_object_type(BitReader& br) {
  const uint32_t t = br.bits(5);
  return static_cast<uint8_t>(t == kObjectTypeEscape ? 32 + br.bits(6) : t);
}

// samplingFrequencyIndex, or an explicit 24-bit frequency after index 15.
Result<uint32_t> read_sample_rate(BitReader& br, uint8_t& index) {
  index = static_cast<uint8_t>(br.bits(4));
  if (index == kExplicitRate) {
    const uint32_t rate = br.bits(24);
    if (br.failed()) return Error(Errc::Truncated, "explicit sampling frequency");
    if (rate == 0) return Error(Errc::Malformed, "sampling frequency 0");
    return rate;
  }
  if (index >= 13) return Error(Errc::Malformed, "samplingFrequencyIndex " + std::to_string(index));
  return kSampleRates[index];
}

}  // namespace

Result<AacConfig> parse_aac_config(std::span<const uint8_t> asc) {
  BitReader br(asc);
  AacConfig c;
  c.object_type = read_object_type(br);
  auto rate = read_sample_rate(br, c.sampling_index);
  if (!rate) return std::move(rate).error().wrap("AudioSpecificConfig");
  c.sample_rate = *rate;
  c.channel_config = static_cast<uint8_t>(br.bits(4));
  if (br.failed()) return Error(Errc::Truncated, "AudioSpecificConfig");
  if (c.object_type == 0) return Error(Errc::Malformed, "AudioSpecificConfig object type 0");
  c.channels = c.channel_config < 8 ? kChannels[c.channel_config] : 0;
  c.core_object_type = c.object_type;
  c.core_sample_rate = c.sample_rate;
  // Explicit (hierarchical) SBR signalling: the extension rate is what a player outputs, and the
  // core's object type follows it.
  if (c.object_type == kObjectTypeSbr || c.object_type == kObjectTypePs) {
    uint8_t ext_index = 0;
    auto ext_rate = read_sample_rate(br, ext_index);
    if (ext_rate) c.sample_rate = *ext_rate;
    if (c.object_type == kObjectTypePs && c.channel_config == 1) c.channels = 2;
    const uint8_t core = ext_rate ? read_object_type(br) : 0;
    c.core_object_type = !br.failed() && core != 0 ? core : kObjectTypeLc;
  }
  return c;
}

std::string_view aac_object_type_name(uint8_t object_type) {
  switch (object_type) {
    case 1: return "AAC-Main";
    case 2: return "AAC-LC";
    case 3: return "AAC-SSR";
    case 4: return "AAC-LTP";
    case kObjectTypeSbr: return "HE-AAC";
    case kObjectTypePs: return "HE-AACv2";
    case 23: return "AAC-LD";
    case 39: return "AAC-ELD";
    default: return "AAC";
  }
}

}  // namespace sluice::media
