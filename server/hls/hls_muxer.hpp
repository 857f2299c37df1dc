// HlsMuxer: one live stream's HLS, on the loop that started it. A subscriber of the stream's hub
// on that loop (a mirror hub when the publisher is on another worker, fed by the mesh like any
// player there) that never drops: each frame goes through a SampleSource into a Segmenter
// (media/hls/), and every new part is published as an immutable snapshot through the stream's
// HlsShare for whichever loop answers the requests.
//
// A new publication is a discontinuity; the publisher leaving ends the segment being written.
// Memory is the segmenter's (window + 2 segments) and one snapshot per reader still sending.
// With hls.dir, every snapshot also goes to an HlsDiskWriter (hls_disk_writer.hpp).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "config/config.hpp"
#include "media/hls/sample_source.hpp"
#include "media/hls/segmenter.hpp"
#include "media/subscriber.hpp"
#include "server/hls/hls_disk_writer.hpp"
#include "server/hls/hls_share.hpp"

namespace sluice::media {
class StreamHub;
}

namespace sluice::server {

class LoopContext;
class StreamRegistry;

class HlsMuxer final : public media::Subscriber {
 public:
  // Called after every snapshot published.
  using OnUpdate = std::function<void(HlsShare&)>;

  // Holds the hub of `key` in `registry` (which must exist) and subscribes to it.
  HlsMuxer(LoopContext& loop, StreamRegistry& registry, const config::AppConfig& app, std::string key,
           std::shared_ptr<HlsShare> share, OnUpdate on_update);
  ~HlsMuxer() override;
  HlsMuxer(const HlsMuxer&) = delete;
  HlsMuxer& operator=(const HlsMuxer&) = delete;

  void on_frame(const media::FramePtr& f) override;
  void on_publish_start() override;
  void on_publish_end() override;

  const std::shared_ptr<HlsShare>& share() const { return share_; }
  const std::string& key() const { return key_; }
  uint64_t bytes_held() const { return segmenter_.bytes_held(); }

 private:
  void publish_snapshot();

  LoopContext& loop_;
  StreamRegistry& registry_;
  std::string key_;
  media::StreamHub* hub_ = nullptr;
  std::shared_ptr<HlsShare> share_;
  OnUpdate on_update_;
  media::hls::SampleSource source_;
  media::hls::Segmenter segmenter_;
  media::hls::PlaylistParams params_;
  std::unique_ptr<HlsDiskWriter> disk_;  // apps.NAME.hls.dir
  uint64_t published_version_ = ~uint64_t{0};
  bool live_ = false;
  bool told_skipped_ = false;
};

// The segmenter and playlist settings an app's hls config asks for.
media::hls::Segmenter::Options hls_segmenter_options(const config::HlsConfig& hls);

}  // namespace sluice::server
