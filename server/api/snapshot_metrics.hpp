// The snapshots' series of /metrics (docs/snapshots.md): decodes against requests shows the cache
// at work. Read from the process-wide SnapshotStats (server/snapshot/snapshot_stats.hpp).
#pragma once

#include <string>

namespace sluice::server {

void snapshot_metrics(std::string& m);

}  // namespace sluice::server
