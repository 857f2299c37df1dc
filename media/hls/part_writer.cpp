#include "media/hls/part_writer.hpp"

#include "media/fmp4/fmp4_writer.hpp"
#include "media/ts/ts_muxer.hpp"

namespace sluice::media::hls {

PartWriter::PartWriter(Container container, const StreamSetup& setup) : container_(container), setup_(setup) {
  if (container_ == Container::MpegTs) ts_ = std::make_unique<ts::TsMuxer>(setup_);
}

PartWriter::~PartWriter() = default;

std::vector<uint8_t> PartWriter::init() const {
  if (container_ == Container::MpegTs) return {};
  return fmp4::init_segment(setup_);
}

std::vector<uint8_t> PartWriter::part(std::span<const Sample> video, std::span<const Sample> audio,
                                      bool starts_segment) {
  if (container_ == Container::Fmp4) return fmp4::fragment(sequence_++, video, audio);
  std::vector<uint8_t> out;
  if (starts_segment) ts_->write_tables(out);
  size_t v = 0, a = 0;
  while (v < video.size() || a < audio.size()) {
    const bool take_video = a == audio.size() || (v < video.size() && video[v].dts <= audio[a].dts);
    ts_->write_sample(take_video ? video[v++] : audio[a++], out);
  }
  return out;
}

}  // namespace sluice::media::hls
