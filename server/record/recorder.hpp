// Recorder: records one live stream while it is published (apps.NAME.record). A subscriber of the
// stream's hub like a player, but one that never drops: every frame is appended to the
// recording's .part as an FLV tag (payload unchanged, timestamp relative to the recording's first
// audio/video frame) through RecordFile, off the loop. Its queue is bounded: past kMaxQueuedBytes
// (a disk slower than the stream) the recording ends with an error instead of growing, and the
// players never notice. Ending (unpublish, destruction) finalizes the file.
#pragma once

#include <uv.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "media/frame.hpp"
#include "media/subscriber.hpp"
#include "server/record/record_file.hpp"

namespace sluice::media {
class StreamHub;
}

namespace sluice::server {

class Recorder final : public media::Subscriber {
 public:
  static constexpr uint64_t kMaxQueuedBytes = 64ull << 20;
  static constexpr size_t kBatchBytes = 64 * 1024;  // what a crash can lose at most, roughly

  struct Settings {
    std::string dir;            // record.dir
    std::string path_template;  // record.path (config/record_template.hpp)
    std::string app;
    std::string stream;
    bool mp4 = false;                  // record.mp4: an MP4 copy of each finished file
    uint64_t segment_duration_ms = 0;  // 0: one file for the whole publication
    uint64_t segment_bytes = 0;        // 0: no size limit
    RecordFile::OnDone on_file_done;   // each finished (or failed) file, on the loop
  };

  // Starts the first file below settings.dir and subscribes to hub.
  Recorder(uv_loop_t* loop, media::StreamHub& hub, Settings settings);
  ~Recorder() override;  // unsubscribes; the file finishes on its own
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;

  void on_frame(const media::FramePtr& f) override;
  void on_publish_end() override { stop("unpublish"); }

  // Ends the recording now (the reason goes to the log line of the finished file).
  void stop(const std::string& why);
  bool recording() const { return !stopped_; }
  uint64_t bytes() const;
  const std::string& path() const;                        // the current file's .part ("" until it is created)
  uint32_t file_duration_ms() const { return last_ts_; }  // of the current file

 private:
  void flush();
  // A new file: FLV header, then the stream's last onMetaData and sequence headers at time 0.
  void start_file();
  bool cut_here(const media::Frame& f, uint32_t rel_ts) const;

  uv_loop_t* loop_;
  media::StreamHub& hub_;
  Settings settings_;
  // What every segment starts with.
  media::FramePtr metadata_;
  media::FramePtr video_header_;
  media::FramePtr audio_header_;
  bool seen_video_ = false;
  uint64_t file_bytes_ = 0;  // appended to the current file
  uint32_t segments_ = 0;
  std::shared_ptr<RecordFile> file_;
  std::vector<uint8_t> batch_;
  bool stopped_ = false;
  bool have_base_ = false;
  uint32_t base_ts_ = 0;
  uint64_t appended_ = 0;
  uint32_t last_ts_ = 0;
};

}  // namespace sluice::server
