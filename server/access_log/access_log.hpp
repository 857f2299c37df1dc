// The access log (docs/access_log.md): process-wide, like the server log (server/io/logging.hpp).
// One line per finished HTTP request and per finished session, appended to a file (O_APPEND,
// mode 0640) or standard error, each line in one write() under a mutex. A record is filled where
// a request or a session ends, from the counters its connection keeps: nothing here runs per media
// message. A failed write is logged (at most once a minute, with the count of lines lost) and is
// never fatal.
#pragma once

#include <uv.h>

#include <memory>
#include <string>

#include "config/access_log.hpp"
#include "server/access_log/access_record.hpp"

namespace sluice::server {

// Opens the configured file (or switches to another, or to another format, or off). May be called
// again at any time from any thread (a configuration reload); a line being written meanwhile goes
// wholly to the old file or wholly to the new one.
void configure_access_log(const config::AccessLogConfig& cfg);
// Opens the file again by its name, for logrotate (SIGUSR1): lines go to the new file from now on.
void reopen_access_log();
// Whether a line would be written now: callers skip building a record when the log is off.
bool access_log_enabled();
// Formats the record and appends it (no-op when off). Fills rec.unix_ms when it is 0.
void write_access_record(AccessRecord rec);

// The node's host name: the host of a session's URL when its client named none (SRT, WebRTC), as
// nginx's $host falls back to the server's name.
const std::string& access_log_host_name();

// SIGUSR1 reopens the access log: a uv_signal on `loop` (main.cpp gives worker 0's), which does
// not keep the loop alive. The loop's final walk (main.cpp's close_loop) closes its handle, so the
// object must outlive that, as SystemdNotifier does.
class AccessLogReopenWatch {
 public:
  explicit AccessLogReopenWatch(uv_loop_t* loop);
  AccessLogReopenWatch(const AccessLogReopenWatch&) = delete;
  AccessLogReopenWatch& operator=(const AccessLogReopenWatch&) = delete;

 private:
  uv_signal_t signal_{};
};

// configure_access_log(cfg), then the SIGUSR1 watch on `loop`: main.cpp's one call.
std::unique_ptr<AccessLogReopenWatch> watch_access_log_reopen(uv_loop_t* loop, const config::AccessLogConfig& cfg);

}  // namespace sluice::server
