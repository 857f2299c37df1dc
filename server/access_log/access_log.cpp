#include "server/access_log/access_log.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <chrono>
#include <cstring>
#include <ctime>
#include <mutex>
#include <string>

// The macros only: printable() is sluice_server_core's, which links this library, not the reverse.
#include "server/io/logging.hpp"

namespace sluice::server {

namespace {

// A write error is logged at most this often, with the number of lines lost since the last one.
constexpr int64_t kErrorLogIntervalMs = 60'000;

struct AccessLog {
  std::mutex mutex;
  std::atomic<bool> enabled{false};
  config::AccessLogConfig cfg;  // what is in force
  int fd = -1;                  // -1: off, or the file could not be opened
  uint64_t lost = 0;            // lines not written since the last error line
  int64_t last_error_ms = -kErrorLogIntervalMs;
};

// Never destroyed: a session that ends while the process exits may still write.
AccessLog& state() {
  static auto* log = new AccessLog;
  return *log;
}

int64_t steady_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(steady_clock::now().time_since_epoch()).count();
}

bool is_stderr(const config::AccessLogConfig& cfg) { return cfg.path == config::AccessLogConfig::kStderr; }

int open_file(const std::string& path) {
  int fd;
  do {
    fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) {
    SLUICE_LOG_ERROR("event=access_log_open_failed path=\"{}\" error=\"{}\"", path, std::strerror(errno));
  }
  return fd;
}

void close_fd(AccessLog& log) {
  if (log.fd >= 0 && log.fd != STDERR_FILENO) ::close(log.fd);
  log.fd = -1;
}

// Under the mutex. Counts the line and says so at most once a minute: a full disk must not
// become a log line per request.
void note_lost(AccessLog& log, const char* why) {
  ++log.lost;
  const int64_t now = steady_ms();
  if (now - log.last_error_ms < kErrorLogIntervalMs) return;
  log.last_error_ms = now;
  SLUICE_LOG_WARN("event=access_log_write_failed path=\"{}\" error=\"{}\" lines_lost={}", log.cfg.path, why, log.lost);
  log.lost = 0;
}

long utc_offset_s(int64_t unix_ms) {
  const auto t = static_cast<std::time_t>(unix_ms / 1000);
  std::tm tm{};
  localtime_r(&t, &tm);
  return tm.tm_gmtoff;
}

}  // namespace

void configure_access_log(const config::AccessLogConfig& cfg) {
  AccessLog& log = state();
  std::lock_guard lock(log.mutex);
  const bool same_target = cfg.path == log.cfg.path && (log.fd >= 0 || cfg.path.empty());
  log.cfg.format = cfg.format;
  if (same_target) return;
  close_fd(log);
  log.cfg.path = cfg.path;
  if (is_stderr(cfg)) {
    log.fd = STDERR_FILENO;
  } else if (!cfg.path.empty()) {
    log.fd = open_file(cfg.path);
  }
  log.enabled = !cfg.path.empty();
  SLUICE_LOG_INFO("event=access_log path=\"{}\" format={} state={}", cfg.path,
                  config::access_log_format_name(cfg.format),
                  cfg.path.empty() ? "off"
                  : log.fd >= 0    ? "open"
                                   : "failed");
}

void reopen_access_log() {
  AccessLog& log = state();
  std::lock_guard lock(log.mutex);
  if (log.cfg.path.empty() || is_stderr(log.cfg)) return;
  const int fd = open_file(log.cfg.path);
  if (fd < 0) return;  // the old file (renamed) goes on taking the lines; the error is logged
  close_fd(log);
  log.fd = fd;
  SLUICE_LOG_INFO("event=access_log_reopened path=\"{}\"", log.cfg.path);
}

bool access_log_enabled() { return state().enabled.load(std::memory_order_relaxed); }

void write_access_record(AccessRecord rec) {
  AccessLog& log = state();
  if (!log.enabled.load(std::memory_order_relaxed)) return;
  if (rec.unix_ms == 0) {
    using namespace std::chrono;
    rec.unix_ms = duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
  }
  const long offset = utc_offset_s(rec.unix_ms);
  std::lock_guard lock(log.mutex);
  if (log.cfg.path.empty()) return;
  if (log.fd < 0) return note_lost(log, "not open");
  std::string line = format_access_line(rec, log.cfg.format, offset);
  line += '\n';
  // One write() per line: with O_APPEND the kernel puts it at the end whole, whoever else writes.
  size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = ::write(log.fd, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return note_lost(log, n < 0 ? std::strerror(errno) : "nothing written");
    done += static_cast<size_t>(n);
  }
}

const std::string& access_log_host_name() {
  static const std::string name = [] {
    char buf[256] = {};
    if (gethostname(buf, sizeof buf - 1) != 0 || buf[0] == '\0') return std::string("localhost");
    return std::string(buf);
  }();
  return name;
}

AccessLogReopenWatch::AccessLogReopenWatch(uv_loop_t* loop) {
  uv_signal_init(loop, &signal_);
  uv_signal_start(
      &signal_,
      [](uv_signal_t*, int) {
        SLUICE_LOG_INFO("event=signal signal=SIGUSR1 action=reopen_access_log");
        reopen_access_log();
      },
      SIGUSR1);
  // The signal must not keep a finished loop running.
  uv_unref(reinterpret_cast<uv_handle_t*>(&signal_));
}

std::unique_ptr<AccessLogReopenWatch> watch_access_log_reopen(uv_loop_t* loop, const config::AccessLogConfig& cfg) {
  configure_access_log(cfg);
  return std::make_unique<AccessLogReopenWatch>(loop);
}

}  // namespace sluice::server
