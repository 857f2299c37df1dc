#include "server/srt/srt_reader.hpp"

#include "server/io/write_batch.hpp"

namespace sluice::server {

SrtReader::SrtReader(PlayerOutput& output, StreamRegistry& registry, std::string key, media::StreamHub& hub,
                     const config::PlayerQueueConfig& queue)
    : LiveSubscriber(output, registry, std::move(key), hub, queue, " proto=srt") {
  subscribe();
}

void SrtReader::on_publish_end() {
  // Leaving now: a new publisher of the name never reaches this reader, whose stream ended.
  ended_ = true;
  unsubscribe();
  output_.request_flush();
}

bool SrtReader::wants(const media::Frame& f) const {
  return !ended_ && (f.kind == media::FrameKind::Video || f.kind == media::FrameKind::Audio);
}

bool SrtReader::fill(std::vector<uint8_t>& out, size_t max_bytes, uint64_t now_ms) {
  // LiveSubscriber fills a batch; this reader's bytes go to `out` instead (append ignores the batch).
  thread_local WriteBatch unused;
  out_ = &out;
  now_ms_ = now_ms;
  const bool more = fill_frames(unused, max_bytes);
  out_ = nullptr;
  if (!more) pacer_.caught_up(now_ms);
  return more;
}

void SrtReader::append(const media::Frame& f, WriteBatch&) {
  media::hls::SampleSource::Out s = source_.read(f);
  if (s.kind == media::hls::SampleSource::Kind::Setup) {
    // The tables go out with the first sample: a join brings the video and the audio setup in a row.
    muxer_ = std::make_unique<media::ts::TsMuxer>(source_.setup());
    tables_due_ = true;
    return;
  }
  if (s.kind != media::hls::SampleSource::Kind::Sample || !muxer_) return;
  if (tables_due_ || (s.sample.video && s.sample.keyframe)) muxer_->write_tables(*out_);
  tables_due_ = false;
  started_ = true;
  muxer_->write_sample(s.sample, *out_);
  pacer_.sent(f.timestamp, now_ms_);
}

}  // namespace sluice::server
