// Turning a recording's .part into its final FLV (docs/recording.md): scan the .part, keep its
// valid prefix, write header + onMetaData with duration, filesize and keyframes + the tags to
// the final name, fsync, then remove the .part. Blocking file I/O: run it on the threadpool.
// The same routine ends a recording and repairs one a crash left behind.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace sluice::server {

struct FinalizeReport {
  bool ok = false;
  std::string error;  // when !ok: the .part is left where it is
  std::string final_path;
  uint64_t part_bytes = 0;     // size of the .part
  uint64_t dropped_bytes = 0;  // a torn or inconsistent tail cut off
  uint64_t final_bytes = 0;
  uint64_t duration_ms = 0;
  uint64_t keyframes = 0;
  std::string stopped_at;  // why the scan stopped early, if it did
  // With mp4: the MP4 copy (server/record/mp4_copy.hpp). Its failure leaves the FLV finished.
  bool mp4_wanted = false;
  bool mp4_ok = false;
  std::string mp4_path;
  std::string mp4_error;
  uint64_t mp4_bytes = 0;
  std::vector<std::string> mp4_notes;
};

// part_path ends in ".flv.part"; the final file is the same path without ".part". An existing
// final file next to a .part is an interrupted finalize (the .part is removed last) and is redone.
// mp4: also write NAME.mp4 (record.mp4), after the FLV is synced and before the .part goes, so a
// crash in between makes the repair do both again.
FinalizeReport finalize_recording(const std::string& part_path, bool mp4 = false);

// The log line of the MP4 copy, if one was wanted: event=record_mp4 or record_mp4_failed.
void log_mp4_copy(const FinalizeReport& r);

// Every "*.flv.part" below dir (recursively), for the repair at start.
std::vector<std::string> find_part_files(const std::string& dir);

}  // namespace sluice::server
