// Retention (apps.NAME.record.keep, docs/recording.md): finished recordings older than the age
// are removed, then the oldest ones while all of them together are larger than the size bound.
//
// Rules:
//  1. A recording is a regular file ending in ".flv" or ".mp4" anywhere below a record dir; a
//     recording under way (".flv.part") and the ".flv" of one being finished (its ".part" still
//     there) are never removed, nor counted. Symlinks are neither followed nor removed.
//  2. Apps sharing a directory share its retention: the smallest age and size they set apply.
//  3. The sweep runs on worker 0, at start and every minute, on the threadpool (a directory of
//     thousands of files never stalls the loop); one sweep at a time.
//  4. Subdirectories emptied by a sweep (dated folders of record.path) are removed too; the
//     record dir itself stays.
#pragma once

#include <uv.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace sluice::server {

struct RetentionRule {
  std::string dir;
  std::chrono::milliseconds age{0};  // 0: no age limit
  uint64_t bytes = 0;                // 0: no size bound
};

struct RecordingOnDisk {
  std::string path;
  uint64_t bytes = 0;
  int64_t mtime_unix = 0;
};

struct Expiry {
  std::string path;
  const char* reason = "";  // "age" or "size"
};

// Rule 1's choice, given every finished recording below a dir (any order).
std::vector<Expiry> plan_expiry(std::vector<RecordingOnDisk> files, int64_t now_unix, const RetentionRule& rule);

// Blocking: the finished recordings below dir (rule 1).
std::vector<RecordingOnDisk> list_recordings(const std::string& dir);

// Merges the rules of apps that share a directory (rule 2); rules without a limit are dropped.
std::vector<RetentionRule> merge_retention_rules(std::vector<RetentionRule> rules);

class RecordRetention {
 public:
  static constexpr uint64_t kSweepMs = 60'000;

  RecordRetention(uv_loop_t* loop, std::vector<RetentionRule> rules);
  ~RecordRetention() = default;
  RecordRetention(const RecordRetention&) = delete;
  RecordRetention& operator=(const RecordRetention&) = delete;

  void start();  // sweeps now, then every kSweepMs
  void close();  // stops the timer (a sweep in flight finishes on its own)
  // A reload: the next sweep follows `rules` (one starting now when there were none before).
  void set_rules(std::vector<RetentionRule> rules);

 private:
  void sweep();

  uv_loop_t* loop_;
  std::vector<RetentionRule> rules_;
  uv_timer_t timer_{};
  bool started_ = false;
  bool sweeping_ = false;
  bool closed_ = false;
};

}  // namespace sluice::server
