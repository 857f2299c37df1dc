// HlsDiskWriter: a stream's HLS written to a directory as well (apps.NAME.hls.dir), for an origin
// that a CDN or a plain web server reads: dir/APP/NAME/ gets each complete segment
// (segN.ts|.m4s, the bytes the HTTP side serves), the initialization segments (initK.mp4) and a
// standard playlist (index.m3u8, complete segments only: parts stay in memory).
//
// Rules:
//  1. Files are written off the loop (the libuv threadpool), one job at a time; a file appears
//     whole (written as NAME.tmp, then renamed), the playlist after the segments it lists.
//  2. A slow disk costs memory of one snapshot, never a queue: the next job starts from the
//     newest snapshot; segments that left the window before their turn are not written.
//  3. A segment is removed when it is two segments out of the playlist (a CDN may still ask for
//     the one just dropped). At start, files of these names left by an earlier run are removed.
//  4. A failure (disk full, permissions) is one log line per run of failures; the stream and the
//     memory side go on.
#pragma once

#include <uv.h>

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <utility>

#include "server/hls/hls_share.hpp"

namespace sluice::server {

class HlsDiskWriter {
 public:
  // `dir`: the stream's directory (created when needed).
  HlsDiskWriter(uv_loop_t* loop, std::string dir, std::string key);
  ~HlsDiskWriter();
  HlsDiskWriter(const HlsDiskWriter&) = delete;
  HlsDiskWriter& operator=(const HlsDiskWriter&) = delete;

  // The muxer published `s`: write what is new, now or when the job running ends.
  void on_snapshot(std::shared_ptr<const HlsSnapshot> s);

  uint64_t files_written() const { return files_written_; }

 private:
  struct Job;
  static void run(uv_work_t* req);
  static void done(uv_work_t* req, int status);
  void start_job();
  void finished(Job& job);

  uv_loop_t* loop_;
  std::string dir_;
  std::string key_;
  std::shared_ptr<const HlsSnapshot> latest_;
  bool busy_ = false;
  bool cleaned_ = false;                                  // rule 3's removal of an earlier run's files happened
  bool failing_ = false;                                  // a failure was logged; the next success logs the recovery
  uint64_t next_msn_ = 0;                                 // segments before it are written (or skipped)
  uint32_t inits_written_ = 0;                            // init ids up to it are written
  std::deque<std::pair<uint64_t, std::string>> on_disk_;  // segments written (msn, file), oldest first
  uint64_t files_written_ = 0;
  // The job in flight asks through this whether its writer still exists.
  std::shared_ptr<HlsDiskWriter*> self_;
};

}  // namespace sluice::server
