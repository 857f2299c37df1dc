// At start: recordings a crash (kill -9, power loss, a full disk) left as .part files are
// finalized like any ended recording (server/record/finalize.hpp), off the loop, one log line each.
#pragma once

#include <uv.h>

#include <string>
#include <vector>

namespace sluice::server {

// The .part files are listed here, on the caller's thread, before any new recording can start:
// call it before the listeners open, so a recording of this run is never taken for a leftover.
// A .part below a directory whose app has record.mp4 gets its MP4 copy too.
struct RepairDir {
  std::string dir;
  bool mp4 = false;
};
void repair_recordings(uv_loop_t* loop, const std::vector<RepairDir>& dirs);

}  // namespace sluice::server
