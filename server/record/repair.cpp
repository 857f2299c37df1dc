#include "server/record/repair.hpp"

#include <map>

#include "server/io/logging.hpp"
#include "server/record/finalize.hpp"

namespace sluice::server {

namespace {
struct RepairJob {
  uv_work_t req{};
  std::vector<std::pair<std::string, bool>> parts;  // and whether it gets an MP4 copy
  std::vector<std::pair<std::string, FinalizeReport>> done;
};
}  // namespace

void repair_recordings(uv_loop_t* loop, const std::vector<RepairDir>& dirs) {
  // Apps may share a directory (or one may lie inside another's): each file once, with an MP4
  // copy if any of those apps makes them.
  std::map<std::string, bool> unique;
  for (const RepairDir& d : dirs) {
    for (std::string& p : find_part_files(d.dir)) unique[std::move(p)] |= d.mp4;
  }
  std::vector<std::pair<std::string, bool>> parts(unique.begin(), unique.end());
  if (parts.empty()) return;
  SLUICE_LOG_WARN("event=record_repair_start parts={}", parts.size());
  auto* job = new RepairJob;
  job->req.data = job;
  job->parts = std::move(parts);
  int rc = uv_queue_work(
      loop, &job->req,
      [](uv_work_t* w) {
        auto* j = static_cast<RepairJob*>(w->data);
        for (const auto& [part, mp4] : j->parts) j->done.emplace_back(part, finalize_recording(part, mp4));
      },
      [](uv_work_t* w, int) {
        auto* j = static_cast<RepairJob*>(w->data);
        for (const auto& [part, r] : j->done) {
          if (r.ok) {
            SLUICE_LOG_WARN(
                "event=record_repaired part=\"{}\" file=\"{}\" part_bytes={} dropped_bytes={} bytes={} "
                "duration_ms={} keyframes={} stopped_at=\"{}\"",
                part, r.final_path, r.part_bytes, r.dropped_bytes, r.final_bytes, r.duration_ms, r.keyframes,
                r.stopped_at);
          } else {
            SLUICE_LOG_ERROR("event=record_repair_failed part=\"{}\" error=\"{}\"", part, r.error);
          }
          log_mp4_copy(r);
        }
        delete j;
      });
  if (rc != 0) delete job;
}

}  // namespace sluice::server
