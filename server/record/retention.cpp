#include "server/record/retention.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <map>
#include <set>

#include "server/io/logging.hpp"
#include "server/record/record_stats.hpp"

namespace sluice::server {

namespace fs = std::filesystem;

namespace {

bool ends_with(const std::string& s, std::string_view tail) { return s.size() >= tail.size() && s.ends_with(tail); }

struct SweepJob {
  uv_work_t req{};
  RecordRetention* owner = nullptr;
  std::vector<RetentionRule> rules;
  std::vector<std::pair<Expiry, std::string>> removed;  // and the error, if removing failed
};

// Rule 4: the now-empty directories between each removed file and its record dir.
void remove_empty_parents(const std::string& dir, const std::string& file) {
  const std::string root = fs::path(dir).lexically_normal().string();
  for (fs::path p = fs::path(file).lexically_normal().parent_path(); p.string().starts_with(root + "/");
       p = p.parent_path()) {
    if (::rmdir(p.c_str()) != 0) break;  // not empty: stop
  }
}

}  // namespace

std::vector<Expiry> plan_expiry(std::vector<RecordingOnDisk> files, int64_t now_unix, const RetentionRule& rule) {
  std::vector<Expiry> out;
  std::sort(files.begin(), files.end(), [](const RecordingOnDisk& a, const RecordingOnDisk& b) {
    return a.mtime_unix != b.mtime_unix ? a.mtime_unix < b.mtime_unix : a.path < b.path;
  });
  const int64_t age_s = std::chrono::duration_cast<std::chrono::seconds>(rule.age).count();
  size_t kept_from = 0;
  if (age_s > 0) {
    while (kept_from < files.size() && now_unix - files[kept_from].mtime_unix > age_s) {
      out.push_back({files[kept_from].path, "age"});
      ++kept_from;
    }
  }
  if (rule.bytes > 0) {
    uint64_t total = 0;
    for (size_t i = kept_from; i < files.size(); ++i) total += files[i].bytes;
    for (size_t i = kept_from; i < files.size() && total > rule.bytes; ++i) {
      out.push_back({files[i].path, "size"});
      total -= files[i].bytes;
    }
  }
  return out;
}

std::vector<RecordingOnDisk> list_recordings(const std::string& dir) {
  std::vector<RecordingOnDisk> out;
  std::error_code ec;
  fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    const std::string path = it->path().string();
    if (!ends_with(path, ".flv") && !ends_with(path, ".mp4")) continue;
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    // A .flv (or its .mp4) whose .part is still there is being written or finished.
    const std::string stem = path.substr(0, path.size() - 4);
    if (::access((stem + ".flv.part").c_str(), F_OK) == 0) continue;
    out.push_back({path, static_cast<uint64_t>(st.st_size), static_cast<int64_t>(st.st_mtime)});
  }
  return out;
}

std::vector<RetentionRule> merge_retention_rules(std::vector<RetentionRule> rules) {
  std::map<std::string, RetentionRule> by_dir;
  auto smaller = [](auto a, auto b) { return a.count() == 0 ? b : b.count() == 0 ? a : std::min(a, b); };
  for (RetentionRule& r : rules) {
    if (r.age.count() == 0 && r.bytes == 0) continue;
    auto [it, fresh] = by_dir.emplace(r.dir, r);
    if (fresh) continue;
    it->second.age = smaller(it->second.age, r.age);
    it->second.bytes = it->second.bytes == 0 ? r.bytes
                       : r.bytes == 0        ? it->second.bytes
                                             : std::min(it->second.bytes, r.bytes);
  }
  std::vector<RetentionRule> out;
  for (auto& [dir, r] : by_dir) out.push_back(std::move(r));
  return out;
}

RecordRetention::RecordRetention(uv_loop_t* loop, std::vector<RetentionRule> rules)
    : loop_(loop), rules_(merge_retention_rules(std::move(rules))) {}

void RecordRetention::start() {
  if (rules_.empty() || started_) return;
  started_ = true;
  uv_timer_init(loop_, &timer_);
  timer_.data = this;
  uv_timer_start(
      &timer_, [](uv_timer_t* t) { static_cast<RecordRetention*>(t->data)->sweep(); }, 0, kSweepMs);
}

void RecordRetention::set_rules(std::vector<RetentionRule> rules) {
  rules_ = merge_retention_rules(std::move(rules));
  if (!closed_) start();
}

void RecordRetention::close() {
  if (!started_ || closed_) return;
  closed_ = true;
  uv_close(reinterpret_cast<uv_handle_t*>(&timer_), nullptr);
}

void RecordRetention::sweep() {
  if (sweeping_ || closed_) return;
  sweeping_ = true;
  auto* job = new SweepJob;
  job->req.data = job;
  job->owner = this;
  job->rules = rules_;
  int rc = uv_queue_work(
      loop_, &job->req,
      [](uv_work_t* w) {
        auto* j = static_cast<SweepJob*>(w->data);
        const int64_t now = static_cast<int64_t>(std::time(nullptr));
        for (const RetentionRule& rule : j->rules) {
          for (Expiry& e : plan_expiry(list_recordings(rule.dir), now, rule)) {
            std::error_code ec;
            fs::remove(e.path, ec);
            if (!ec) remove_empty_parents(rule.dir, e.path);
            j->removed.emplace_back(std::move(e), ec ? ec.message() : std::string());
          }
        }
      },
      [](uv_work_t* w, int) {
        auto* j = static_cast<SweepJob*>(w->data);
        for (const auto& [e, error] : j->removed) {
          if (error.empty()) {
            ++RecordStats::get().files_removed;
            SLUICE_LOG_INFO("event=record_expired file=\"{}\" reason={}", e.path, e.reason);
          } else {
            SLUICE_LOG_WARN("event=record_expire_failed file=\"{}\" reason={} error=\"{}\"", e.path, e.reason, error);
          }
        }
        j->owner->sweeping_ = false;
        delete j;
      });
  if (rc != 0) {
    sweeping_ = false;
    delete job;
  }
}

}  // namespace sluice::server
