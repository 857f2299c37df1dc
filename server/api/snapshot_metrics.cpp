#include "server/api/snapshot_metrics.hpp"

#include "server/api/metrics_writer.hpp"
#include "server/snapshot/snapshot_stats.hpp"

namespace sluice::server {

void snapshot_metrics(std::string& m) {
  SnapshotStats& snap = SnapshotStats::get();
  MetricsText out{m};
  out.metric("sluice_snapshot_decodes_total", "counter", "Keyframes decoded and encoded as JPEG for snapshots.");
  out.value("sluice_snapshot_decodes_total", static_cast<double>(snap.decodes.load()));
  out.metric("sluice_snapshot_decode_failures_total", "counter", "Snapshot decodes that failed.");
  out.value("sluice_snapshot_decode_failures_total", static_cast<double>(snap.decode_failures.load()));
  out.metric("sluice_snapshot_decode_seconds_total", "counter", "Time snapshot decodes took on the threadpool.");
  out.value("sluice_snapshot_decode_seconds_total", static_cast<double>(snap.decode_us.load()) / 1e6);
  out.metric("sluice_snapshot_requests_total", "counter", "Snapshot requests admitted, by how they were answered.");
  for (size_t i = 0; i < kSnapshotResults.size(); ++i) {
    out.value("sluice_snapshot_requests_total{result=\"" + std::string(kSnapshotResults[i]) + "\"}",
              static_cast<double>(snap.requests[i].load()));
  }
}

}  // namespace sluice::server
