#include "server/snapshot/snapshot_stats.hpp"

namespace sluice::server {

SnapshotStats& SnapshotStats::get() {
  static SnapshotStats stats;
  return stats;
}

}  // namespace sluice::server
