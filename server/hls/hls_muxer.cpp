#include "server/hls/hls_muxer.hpp"

#include <ctime>

#include "config/record_template.hpp"
#include "media/stream_hub.hpp"
#include "server/io/logging.hpp"
#include "server/io/loop_context.hpp"
#include "server/io/wall_clock.hpp"
#include "server/live/stream_registry.hpp"

namespace sluice::server {

media::hls::Segmenter::Options hls_segmenter_options(const config::HlsConfig& hls) {
  media::hls::Segmenter::Options o;
  o.container = hls.variant == config::HlsVariant::MpegTs ? media::hls::Container::MpegTs : media::hls::Container::Fmp4;
  o.segment_ms = uint32_t(hls.segment.count());
  o.part_ms = hls.variant == config::HlsVariant::LowLatency ? uint32_t(hls.part.count()) : 0;
  o.window = hls.window;
  return o;
}

HlsMuxer::HlsMuxer(LoopContext& loop, StreamRegistry& registry, const config::AppConfig& app, std::string key,
                   std::shared_ptr<HlsShare> share, OnUpdate on_update)
    : loop_(loop),
      registry_(registry),
      key_(std::move(key)),
      share_(std::move(share)),
      on_update_(std::move(on_update)),
      segmenter_(hls_segmenter_options(app.hls)) {
  params_.container = segmenter_.options().container;
  params_.low_latency = segmenter_.options().part_ms != 0;
  params_.part_ms = segmenter_.options().part_ms;
  params_.window = segmenter_.options().window;
  if (!app.hls.dir.empty()) {
    // Stream names have no "." or ".." segment (validated at publish); checked again before a path.
    if (config::is_confined_relative_path(key_)) {
      disk_ = std::make_unique<HlsDiskWriter>(loop_.loop(), app.hls.dir + "/" + key_, key_);
    } else {
      SLUICE_LOG_WARN(
          "proto=hls event=hls_write_failed stream=\"{}\" reason=\"the name cannot be a path below hls.dir\"",
          printable(key_));
    }
  }
  hub_ = registry_.find(key_);
  registry_.hold(key_);
  live_ = hub_ && hub_->has_publisher();
  publish_snapshot();
  if (hub_) hub_->add_subscriber(this);  // replays the sequence headers and the GOP cache
}

HlsMuxer::~HlsMuxer() {
  if (hub_) hub_->remove_subscriber(this);
  registry_.release(key_);
}

void HlsMuxer::on_frame(const media::FramePtr& f) {
  media::hls::SampleSource::Out out = source_.read(*f);
  if (out.kind == media::hls::SampleSource::Kind::Setup) {
    segmenter_.set_setup(source_.setup());
  } else if (out.kind == media::hls::SampleSource::Kind::Sample) {
    segmenter_.push(out.sample, std::move(out.keep), wall_clock_ms());
  }
  if (!told_skipped_ && !source_.skipped().empty()) {
    told_skipped_ = true;
    SLUICE_LOG_WARN("proto=hls event=hls_track_left_out stream={} codec={} reason=\"HLS carries H.264, HEVC and AAC\"",
                    key_, source_.skipped());
  }
  if (segmenter_.version() != published_version_) publish_snapshot();
}

void HlsMuxer::on_publish_start() {
  live_ = true;
  source_.reset_clock();
  segmenter_.mark_discontinuity();
  publish_snapshot();
}

void HlsMuxer::on_publish_end() {
  live_ = false;
  segmenter_.finish();
  publish_snapshot();
}

void HlsMuxer::publish_snapshot() {
  auto s = std::make_shared<HlsSnapshot>();
  s->version = segmenter_.version();
  s->params = params_;
  s->params.target_s = segmenter_.target_duration_s();
  s->params.discontinuity_sequence = segmenter_.discontinuity_sequence();
  s->segments.reserve(segmenter_.segments().size());
  for (const media::hls::Segment& seg : segmenter_.segments()) {
    s->segments.push_back(media::hls::clone(seg));
    // Players that know no parts (ffmpeg, VLC, GStreamer) need a whole segment to start.
    if (seg.complete) s->ready = true;
  }
  for (const media::hls::InitSegment& i : segmenter_.inits()) s->inits.push_back({i.id, i.bytes.share()});
  s->live = live_;
  if (s->ready) {
    s->playlist = Slice::copy_of(media::hls::render_playlist(s->segments, s->params));
    if (s->params.low_latency) {
      media::hls::PlaylistParams delta = s->params;
      delta.skip = true;
      s->delta_playlist = Slice::copy_of(media::hls::render_playlist(s->segments, delta));
    }
  }
  published_version_ = s->version;
  if (disk_) disk_->on_snapshot(s);
  share_->publish(std::move(s));
  if (on_update_) on_update_(*share_);
}

}  // namespace sluice::server
