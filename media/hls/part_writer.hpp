// PartWriter: the container bytes of one part (a run of samples of both tracks), MPEG-TS or
// fragmented MP4, and the fMP4 initialization segment. The segmenter (segmenter.hpp) decides the
// cuts; this only writes.
//   MPEG-TS: a part that starts a segment starts with PAT and PMT, so every segment can be decoded
//            on its own (RFC 8216 §3.2); samples of both tracks go out merged by decode time.
//   fMP4:    each part is one moof + mdat (ISO/IEC 23000-19 CMAF chunk); the init segment holds
//            the sample descriptions.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "media/hls/sample.hpp"

namespace sluice::media::ts {
class TsMuxer;
}

namespace sluice::media::hls {

enum class Container : uint8_t { MpegTs, Fmp4 };

class PartWriter {
 public:
  PartWriter(Container container, const StreamSetup& setup);
  ~PartWriter();
  PartWriter(const PartWriter&) = delete;
  PartWriter& operator=(const PartWriter&) = delete;

  Container container() const { return container_; }
  // The fMP4 initialization segment; empty for MPEG-TS.
  std::vector<uint8_t> init() const;
  std::vector<uint8_t> part(std::span<const Sample> video, std::span<const Sample> audio, bool starts_segment);

 private:
  Container container_;
  StreamSetup setup_;
  std::unique_ptr<ts::TsMuxer> ts_;
  uint32_t sequence_ = 1;  // fMP4 mfhd sequence_number: one per fragment, from 1
};

}  // namespace sluice::media::hls
