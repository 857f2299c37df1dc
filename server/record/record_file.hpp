// RecordFile: the file side of one recording, shared by the Recorder (on the loop) and the
// threadpool jobs that open, append to and finalize it, so a job in flight outlives the stream
// that started it. Writes are append-only and at most one is in flight; what arrives meanwhile
// waits in `pending`, bounded by the caller.
//
// Lifecycle: open() -> append()* -> finish(). finish() flushes what is pending, closes the .part
// and finalizes it (server/record/finalize.hpp) into the final name, all off the loop.
#pragma once

#include <uv.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace sluice::server {

class RecordFile : public std::enable_shared_from_this<RecordFile> {
 public:
  // What a finished file was, for its done hook (the caller's, e.g. hooks.on_record_done).
  struct Done {
    bool ok = false;
    std::string path;  // the final file, or the .part left aside when !ok
    std::string error;
    uint64_t bytes = 0;
    uint64_t duration_ms = 0;
    int64_t started_unix = 0;
    int64_t ended_unix = 0;
    std::string reason;    // why it ended: unpublish, segment, ...
    std::string mp4_path;  // the MP4 copy (record.mp4), when it was written
  };
  using OnDone = std::function<void(const Done&)>;

  // mp4: finishing also writes the MP4 copy (record.mp4).
  RecordFile(uv_loop_t* loop, std::string dir, std::string base_name, OnDone on_done = {}, bool mp4 = false);
  ~RecordFile();

  // dir: the app's record.dir; base_name: the expanded record.path, relative to it (may name
  // subdirectories). Creates <dir>/<base>.flv.part off the loop, see create_part_beneath().
  void open();
  // Queues bytes; they are written in order, one write at a time.
  void append(std::vector<uint8_t>&& bytes);
  // No more appends: write what waits, close, finalize.
  void finish(std::string why);

  uint64_t queued_bytes() const { return pending_.size() + in_flight_; }
  uint64_t written_bytes() const { return written_; }
  bool failed() const { return failed_; }
  const std::string& error() const { return error_; }
  const std::string& part_path() const { return part_path_; }
  const std::string& final_path() const { return final_path_; }

 private:
  struct WriteReq;
  struct OpenJob;
  struct FinalizeJob;

  void write_next();
  void on_written(ssize_t result);
  void start_finalize();
  void fail(std::string why);

  uv_loop_t* loop_;
  std::string dir_;
  std::string base_;
  std::string part_path_;
  std::string final_path_;
  int fd_ = -1;
  bool opening_ = false;
  bool finishing_ = false;
  bool finalized_ = false;
  bool failed_ = false;
  std::string error_;
  std::string end_reason_;
  std::vector<uint8_t> pending_;
  uint64_t in_flight_ = 0;
  uint64_t written_ = 0;
  OnDone on_done_;
  bool mp4_ = false;
  int64_t started_unix_ = 0;
};

// Blocking (threadpool): creates root/rel_stem.flv.part, making the directories of rel_stem below
// root without following symlinks, and never reusing a name: when rel_stem.flv, .mp4 or .flv.part
// exists, -1, -2, ... are appended. The descriptor (append-only), or -1 with `error`.
int create_part_beneath(const std::string& root, const std::string& rel_stem, std::string& part_path,
                        std::string& error);

}  // namespace sluice::server
