#include "server/api/snapshot_metrics.hpp"

#include <cstdio>

#include "server/snapshot/snapshot_stats.hpp"

namespace sluice::server {

namespace {

void family(std::string& m, const char* name, const char* help) {
  m += "# HELP ";
  m += name;
  m += ' ';
  m += help;
  m += "\n# TYPE ";
  m += name;
  m += " counter\n";
}

void value(std::string& m, const std::string& series, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, " %.15g\n", v);
  m += series;
  m += buf;
}

}  // namespace

void snapshot_metrics(std::string& m) {
  SnapshotStats& snap = SnapshotStats::get();
  family(m, "sluice_snapshot_decodes_total", "Keyframes decoded and encoded as JPEG for snapshots.");
  value(m, "sluice_snapshot_decodes_total", static_cast<double>(snap.decodes.load()));
  family(m, "sluice_snapshot_decode_failures_total", "Snapshot decodes that failed.");
  value(m, "sluice_snapshot_decode_failures_total", static_cast<double>(snap.decode_failures.load()));
  family(m, "sluice_snapshot_decode_seconds_total", "Time snapshot decodes took on the threadpool.");
  value(m, "sluice_snapshot_decode_seconds_total", static_cast<double>(snap.decode_us.load()) / 1e6);
  family(m, "sluice_snapshot_requests_total", "Snapshot requests admitted, by how they were answered.");
  for (size_t i = 0; i < kSnapshotResults.size(); ++i) {
    value(m, "sluice_snapshot_requests_total{result=\"" + std::string(kSnapshotResults[i]) + "\"}",
          static_cast<double>(snap.requests[i].load()));
  }
}

}  // namespace sluice::server
