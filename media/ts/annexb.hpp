// H.264 / HEVC access units from the AVCC form (NAL units behind big-endian lengths, ISO 14496-15)
// to the Annex B byte stream form that MPEG-TS carries (ITU-T H.264 Annex B, H.265 Annex B: each
// NAL unit behind a 00 00 00 01 start code), as ISO/IEC 13818-1 "Carriage of ... AVC video" and
// "Carriage of HEVC" require, with an access unit delimiter first in every access unit and the
// parameter sets in front of every random access point (HLS players start decoding at any
// segment, and TS has no out-of-band configuration).
//
// Rules:
//  1. The configuration record is parsed here, bounds-checked. A record that does not parse whole
//     gives no parameter sets; its NAL length size is still taken from the fixed header when that
//     is there (4 otherwise), so the frames still convert.
//  2. A NAL length that runs past the end of the sample ends the access unit there: the NAL units
//     before it are kept. NAL units shorter than their header (empty, or 1 byte in HEVC, whose header
//     has 2) are dropped: a start code with no NAL unit behind it.
//  3. An AUD is added unless the first NAL unit already is a whole one; the parameter sets are added to a
//     keyframe, right after the AUD, unless it already carries an SPS (the encoder then sent its
//     own, maybe newer ones).
//  4. Emulation prevention is the encoder's business: NAL units are copied as they are.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "media/hls/sample.hpp"

namespace sluice::media::ts {

inline constexpr uint8_t kStartCode[4] = {0, 0, 0, 1};

class AnnexB {
 public:
  // `codec` is Avc or Hevc; anything else converts nothing.
  AnnexB(hls::Codec codec, std::span<const uint8_t> record);

  uint8_t length_size() const { return length_size_; }
  // VPS (HEVC), SPS, PPS of the record, each behind a start code. Empty when the record did not
  // parse or had none.
  std::span<const uint8_t> parameter_sets() const { return parameter_sets_; }
  bool valid() const { return codec_ == hls::Codec::Avc || codec_ == hls::Codec::Hevc; }

  struct Plan {
    bool aud = false;             // prepend an access unit delimiter
    bool parameter_sets = false;  // then the record's parameter sets
    size_t nal_units = 0;         // NAL units of the sample that are copied
    size_t size = 0;              // bytes of the whole Annex B access unit
  };
  // What write() will produce for `sample`: a plan with nal_units == 0 means there is nothing
  // to decode in it.
  Plan plan(std::span<const uint8_t> sample, bool keyframe) const;

  // Feeds the Annex B access unit to sink(std::span<const uint8_t>) in pieces, exactly plan.size
  // bytes in all. `plan` must come from plan() for the same sample.
  template <class Sink>
  void write(const Plan& plan, std::span<const uint8_t> sample, Sink&& sink) const {
    if (plan.aud) sink(aud());
    if (plan.parameter_sets && plan.aud) sink(parameter_sets());
    // The sample's own AUD stays first: the parameter sets go right behind it.
    bool sets_after = plan.parameter_sets && !plan.aud;
    for_each_nal(sample, [&](std::span<const uint8_t> nal) {
      sink(std::span<const uint8_t>(kStartCode));
      sink(nal);
      if (sets_after) sink(parameter_sets());
      sets_after = false;
    });
  }

  // Calls f(nal) for every NAL unit of an AVCC sample that holds at least its header (rule 2).
  template <class F>
  void for_each_nal(std::span<const uint8_t> sample, F&& f) const {
    size_t pos = 0;
    while (sample.size() - pos >= length_size_) {
      size_t len = 0;
      for (size_t i = 0; i < length_size_; ++i) len = len << 8 | sample[pos + i];
      pos += length_size_;
      if (len > sample.size() - pos) return;
      if (len >= nal_header_size()) f(sample.subspan(pos, len));
      pos += len;
    }
  }

  size_t nal_header_size() const { return codec_ == hls::Codec::Hevc ? 2 : 1; }
  // The NAL unit type from the first header byte.
  uint8_t nal_type(uint8_t header) const {
    return codec_ == hls::Codec::Hevc ? static_cast<uint8_t>((header >> 1) & 0x3F)
                                      : static_cast<uint8_t>(header & 0x1F);
  }

 private:
  std::span<const uint8_t> aud() const;
  void parse_avc(std::span<const uint8_t> record);
  void parse_hevc(std::span<const uint8_t> record);

  hls::Codec codec_;
  uint8_t length_size_ = 4;
  std::vector<uint8_t> parameter_sets_;
};

}  // namespace sluice::media::ts
