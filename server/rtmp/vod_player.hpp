// VodPlayer: one VOD stream played on a connection: a file (or a playlist of files) sent in real
// time, a little ahead of the player (its buffer length), with seek, pause and stop. When to read
// what is the VodPacer's decision (media/vod/pacer.hpp); this class does the I/O it asks for.
//
// Memory per player is small and bounded: the playlist holds at most playlist_max_entries names
// (each at most the app's name_max_bytes), the shared file index is not copied, at most one read
// (<= VodPacer::kReadBudget bytes) is in flight, cached ranges are read into the loop's one
// buffer, and nothing is read while the connection still has more than
// VodPacer::kMaxPendingBytes to write.
#pragma once

#include <uv.h>

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "server/access/access_ticket.hpp"
#include "media/vod/pacer.hpp"
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

  // playlist_max_entries: how many play(reset=false) items may wait behind the current one.
  VodPlayer(RtmpConnection& conn, uint32_t stream_id, VodRoot root, uint32_t playlist_max_entries);
  ~VodPlayer();
  VodPlayer(const VodPlayer&) = delete;
  VodPlayer& operator=(const VodPlayer&) = delete;

  // play(reset=true) starts `item` now; play(reset=false) queues it after the current one, or,
  // when the playlist is full, changes nothing and returns false (the caller tells the player).
  bool play(Item item, bool reset);
  void seek(double ms);
  void pause(bool paused);
  void set_buffer_length(uint32_t ms) { pacer_.set_buffer_length(ms); }
  // The connection finished a write: more may be sent now.
  void on_drain();

  uint32_t stream_id() const { return stream_id_; }
  const std::string& name() const { return current_.name; }

  // Its seat in the app's limits and its done hook (server/access/access_ticket.hpp).
  AccessTicket ticket;

 private:
  static void on_timer(uv_timer_t* t);
  void start_item(Item item, bool first);
  void on_file(Result<VodFilePtr> file, uint64_t generation);
  // Does what the pacer says until it says to wait.
  void pump();
  // Reads a plan: from the page cache on the loop, else on the threadpool (false: a read is in
  // flight, on_read goes on). Sends it at once when cached; true when all of it went out.
  bool read_plan(const media::vod::ReadPlan& plan);
  void start_blocking_read(const media::vod::ReadPlan& plan);
  void on_read(std::span<const uint8_t> bytes, ssize_t result, uint64_t generation, const media::vod::ReadPlan& plan);
  // The one write path of the media: the plan's messages are made in the loop's wire buffer and
  // handed to the connection, which writes what the socket takes and queues the rest. True when
  // all of it went out (or there was nothing to send).
  bool send_plan(const media::vod::ReadPlan& plan, std::span<const uint8_t> bytes, bool read_on_loop);
  void finish_item();

  RtmpConnection& conn_;
  uint32_t stream_id_;
  VodRoot root_;
  uint32_t playlist_max_entries_;
  uv_timer_t* timer_;  // owned; freed in its close callback (libuv rule)
  std::shared_ptr<bool> alive_;
  Item current_;
  std::deque<Item> playlist_;
  VodFilePtr file_;
  uint64_t generation_ = 0;  // bumps on seek/new item: in-flight reads of the old position are dropped
  media::vod::VodPacer pacer_;
  uint32_t ts_offset_ = 0;  // playlist items continue each other's timeline
  uint32_t last_ts_ = 0;
  bool reading_ = false;
  bool playing_ = false;
  // File reads of the current item served from the page cache on the loop / by the threadpool.
  uint32_t reads_cached_ = 0;
  uint32_t reads_blocking_ = 0;
};

}  // namespace sluice::server
