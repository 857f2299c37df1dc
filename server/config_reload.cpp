// The hot reload of the configuration file (docs/configuration.md, "Reload"): SIGHUP, a change of
// the file (debounced) or POST /api/v1/config/reload make worker 0 read and validate the whole file
// first. An invalid file, or one with a change that needs a restart, or a new listener that cannot
// be bound, leaves the configuration in force untouched; otherwise the new file becomes an
// immutable snapshot that every loop swaps in on its own thread. Connections keep working: what
// they took from the old snapshot (an admitted session's app) stays alive with them.
#include <algorithm>
#include <time.h>

#include <chrono>

#include "config/default_config.hpp"
#include "config/load.hpp"
#include "config/reload_diff.hpp"
#include "server/access_log/access_log.hpp"
#include "server/http/service.hpp"
#include "server/io/file_watch.hpp"
#include "server/io/logging.hpp"
#include "server/record/retention.hpp"
#include "server/relay/relay_manager.hpp"
#include "server/server.hpp"

namespace sluice::server {

namespace {

// A save is a truncate, writes and a rename: one reload once the file has been quiet this long.
constexpr uint64_t kWatchQuietMs = 300;

std::string joined(const std::vector<std::string>& lines, const char* separator) {
  std::string out;
  for (const std::string& l : lines) out += (out.empty() ? "" : separator) + l;
  return out;
}

// A log line stays one line: the loader's problems come one per line.
std::string one_line(std::string text) {
  for (char& c : text) {
    if (c == '\n') c = '|';
  }
  return text;
}

// This thread's CPU time: what a reload cost its loop, not the machine's other processes' turns.
uint64_t thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000 + static_cast<uint64_t>(ts.tv_nsec);
}

uint64_t unix_ms() {
  using namespace std::chrono;
  return static_cast<uint64_t>(duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count());
}

}  // namespace

config::ConfigSnapshot make_config_snapshot(config::Config config) {
  ++config_snapshots_alive();
  return config::ConfigSnapshot(new config::Config(std::move(config)), [](const config::Config* c) {
    --config_snapshots_alive();
    delete c;
  });
}

std::vector<RetentionRule> retention_rules(const config::Config& config) {
  std::vector<RetentionRule> keep;
  for (const auto& app : config.apps) {
    if (app.record.enabled()) keep.push_back({app.record.dir, app.record.keep_age, app.record.keep_bytes});
  }
  return keep;
}

void Server::watch_config_file() {
  if (config().source == config::kEmbeddedSourceName) return;
  // Always watched: reload.watch, which a reload may turn on or off, decides at each change.
  config_watch_ = std::make_unique<FileWatch>(loop_, config().source, kWatchQuietMs, [this] {
    if (config().reload.watch) reload_config("file change");
  });
  if (auto r = config_watch_->start(); !r) {
    SLUICE_LOG_WARN("event=config_watch state=off reason=\"{}\"", r.error().message());
  }
}

void Server::reload_config(const char* trigger, std::function<void(const ReloadReport&)> done) {
  ReloadReport r;
  r.trigger = trigger;
  r.unix_ms = unix_ms();
  const uint64_t id = next_reload_id_++;
  const uint64_t began_ns = thread_cpu_ns();
  uint32_t loops = 0;
  if (stopping()) {
    r.result = ReloadReport::Result::Refused;
    r.error = "the server is stopping";
  } else if (config().source == config::kEmbeddedSourceName) {
    r.result = ReloadReport::Result::Refused;
    r.error = "started with the embedded default configuration: there is no file to read again (use --config)";
  } else {
    if (reload_observer_) reload_observer_(nullptr);
    loops = try_reload(r, id);
  }
  r.loop_cpu_us = (thread_cpu_ns() - began_ns) / 1000;
  // Told when every loop has it: an answer of "applied" means a publish on any loop meets the new
  // keys, and a removed listener is closed on every loop.
  pending_reloads_.push_back({id, std::move(r), loops, std::move(done)});
  end_reloads();
}

void Server::on_config_taken(uint64_t id, uint64_t held_us) {
  for (PendingReload& p : pending_reloads_) {
    if (p.id != id || p.loops_left == 0) continue;
    --p.loops_left;
    p.report.loop_cpu_us = std::max(p.report.loop_cpu_us, held_us);
  }
  end_reloads();
}

void Server::take_config(MeshEvent& e) {
  const uint64_t began_ns = thread_cpu_ns();
  apply_config(std::move(e.config));
  if (http_) http_->follow_listeners(e.listen);
  auto taken = std::make_unique<MeshEvent>();
  taken->kind = MeshEvent::Kind::ConfigTaken;
  taken->id = e.id;
  taken->held_us = (thread_cpu_ns() - began_ns) / 1000;  // CPU time: see ReloadReport
  mesh_->post(0, std::move(taken));
}

void Server::end_reloads() {
  while (!pending_reloads_.empty() && pending_reloads_.front().loops_left == 0) {
    PendingReload p = std::move(pending_reloads_.front());
    pending_reloads_.pop_front();
    const ReloadReport& r = p.report;
    reload_history_.record(r);
    if (r.ok()) {
      SLUICE_LOG_INFO("event=config_reload result={} trigger=\"{}\" generation={} loop_cpu_ms={:.1f} changes=\"{}\"",
                      reload_result_name(r.result), r.trigger, reload_history_.generation, r.loop_cpu_us / 1000.0,
                      joined(r.changes, "; "));
    } else {
      SLUICE_LOG_ERROR("event=config_reload result={} trigger=\"{}\" kept=previous error=\"{}\" loop_cpu_ms={:.1f}",
                       reload_result_name(r.result), r.trigger, one_line(r.error), r.loop_cpu_us / 1000.0);
    }
    if (reload_observer_) reload_observer_(&r);
    if (p.done) p.done(r);
  }
}

uint32_t Server::try_reload(ReloadReport& r, uint64_t id) {
  auto loaded = config::load_file(config().source);
  if (!loaded) {
    r.result = ReloadReport::Result::Invalid;
    r.error = loaded.error().context.empty() ? loaded.error().message() : loaded.error().context;
    return 0;
  }
  config::ReloadDiff diff = config::diff_for_reload(config(), *loaded);
  r.changes = diff.changes;
  if (!diff.applicable()) {
    r.result = ReloadReport::Result::Refused;
    r.error = "needs a restart: " + joined(diff.needs_restart, "; ");
    return 0;
  }
  if (diff.unchanged()) {
    r.result = ReloadReport::Result::Unchanged;
    return 0;
  }
  // The last steps that can fail: new listeners. After them, nothing is refused.
  std::vector<std::string> bound;
  auto listening = rtmp_->open_listeners(*loaded, bound);
  if (listening && http_) {
    listening = http_->open_listeners(*loaded, mesh_ && mesh_->size() > 1, bound);
    if (!listening) rtmp_->undo_listeners();
  }
  if (!listening) {
    r.result = ReloadReport::Result::Refused;
    r.error = listening.error().message();
    return 0;
  }
  rtmp_->close_unlisted_listeners(*loaded);
  if (http_) http_->close_unlisted_listeners(*loaded);
  for (const std::string& b : bound) SLUICE_LOG_INFO("event=listener_opened address={}", b);
  bound_.insert(bound_.end(), bound.begin(), bound.end());
  config::ConfigSnapshot snapshot = make_config_snapshot(std::move(*loaded));
  apply_config(snapshot);
  r.result = ReloadReport::Result::Applied;
  if (!mesh_) return 0;
  for (uint32_t w = 1; w < mesh_->size(); ++w) {
    auto e = std::make_unique<MeshEvent>();
    e->kind = MeshEvent::Kind::ConfigReload;
    e->id = id;
    e->config = snapshot;
    if (http_) e->listen = http_->listening();
    mesh_->post(w, std::move(e));
  }
  return mesh_->size() - 1;
}

void Server::apply_config(config::ConfigSnapshot next) {
  context_.set_config(std::move(next));
  const config::Config& c = config();
  registry_.set_max_streams(c.rtmp.limits.max_streams);
  if (c.reload.recheck) {
    const size_t ended = gate_.recheck();
    if (ended > 0) SLUICE_LOG_WARN("worker={} event=access_recheck sessions_ended={}", worker_, ended);
  }
  if (relays_) relays_->on_config_changed();
  if (worker_ != 0) return;
  set_log_level(c.log.level);
  configure_access_log(c.access_log);  // opened again by its name: a reload also serves logrotate
  if (retention_) retention_->set_rules(retention_rules(c));
}

}  // namespace sluice::server
