// VodPlayer: one VOD stream played on a connection: a file (or a playlist of files) sent in real
// time, a little ahead of the player (its buffer length), with seek, pause and stop.
//
// Memory per player is small and bounded: the shared file index is not copied, at most one read
// (<= kReadBudget bytes) is in flight, cached ranges are read into the loop's one buffer, and
// nothing is read while the connection still has more than kMaxPendingBytes to write.
#pragma once

#include <uv.h>

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "server/vod/files.hpp"

namespace sluice::server {

class RtmpConnection;

class VodPlayer {
 public:
  struct Item {
    std::string name;
    double start_ms = 0;      // < 0: from the beginning
    double duration_ms = -1;  // < 0: to the end
  };

  VodPlayer(RtmpConnection& conn, uint32_t stream_id, std::string root);
  ~VodPlayer();
  VodPlayer(const VodPlayer&) = delete;
  VodPlayer& operator=(const VodPlayer&) = delete;

  // play(reset=true) starts `item` now; play(reset=false) queues it after the current one.
  void play(Item item, bool reset);
  void seek(double ms);
  void pause(bool paused);
  void set_buffer_length(uint32_t ms) { buffer_ms_ = ms; }
  // The connection finished a write: more may be sent now.
  void on_drain();

  uint32_t stream_id() const { return stream_id_; }
  const std::string& name() const { return current_.name; }

 private:
  static void on_timer(uv_timer_t* t);
  void start_item(Item item, bool first);
  void on_file(Result<VodFilePtr> file, uint64_t generation);
  void begin_at(uint32_t sample);
  void pump();
  void start_blocking_read(const media::vod::ReadPlan& plan);
  void on_read(std::span<const uint8_t> bytes, ssize_t result, uint64_t generation, const media::vod::ReadPlan& plan);
  // Sends the plan's samples as session output, or appends their wire bytes to *direct.
  void send_plan(const media::vod::ReadPlan& plan, std::span<const uint8_t> bytes, std::vector<uint8_t>* direct);
  void send_sample(const media::vod::Sample& s, std::span<const uint8_t> bytes, std::vector<uint8_t>* direct);
  void finish_item();
  void schedule(uint64_t delay_ms);
  uint64_t media_clock() const;
  uint32_t lead_ms() const;

  RtmpConnection& conn_;
  uint32_t stream_id_;
  std::string root_;
  uv_timer_t* timer_;  // owned; freed in its close callback (libuv rule)
  std::shared_ptr<bool> alive_;
  Item current_;
  std::deque<Item> playlist_;
  VodFilePtr file_;
  uint64_t generation_ = 0;  // bumps on seek/new item: in-flight reads of the old position are dropped
  uint32_t next_ = 0;
  uint32_t end_ = 0;
  uint32_t end_ms_ = UINT32_MAX;
  uint32_t start_media_ms_ = 0;
  uint64_t start_wall_ms_ = 0;
  uint32_t buffer_ms_ = 0;
  uint32_t ts_offset_ = 0;  // playlist items continue each other's timeline
  uint32_t last_ts_ = 0;
  bool reading_ = false;
  bool paused_ = false;
  bool playing_ = false;
  uint64_t paused_at_wall_ = 0;
  // File reads of the current item served from the page cache on the loop / by the threadpool.
  uint32_t reads_cached_ = 0;
  uint32_t reads_blocking_ = 0;
  uint64_t burst_bytes_ = 0;  // read on the loop since the last timer wake-up
};

}  // namespace sluice::server
