// sd_notify(3) for systemd's Type=notify service (deploy/debian/sluice.service): READY=1 once
// every listener is bound, STOPPING=1 when SIGTERM or SIGINT begins the stop or the drain, and
// STATUS= lines for `systemctl status`. Does nothing when NOTIFY_SOCKET is unset (not started by
// systemd) or the build has no libsystemd (cmake/SluiceSystemd.cmake).
#pragma once

#include <uv.h>

#include <array>
#include <cstdint>
#include <string>

namespace sluice::server {

class Server;

class SystemdNotifier {
 public:
  // Watches SIGTERM and SIGINT on worker 0's loop beside the server's own handlers (which stop or
  // drain), without keeping the loop alive; the loop's final walk closes the handles. `drain_ms`
  // (shutdown.drain) makes the stopping STATUS say that sessions may go on that long.
  SystemdNotifier(uv_loop_t* loop, int64_t drain_ms);
  SystemdNotifier(const SystemdNotifier&) = delete;
  SystemdNotifier& operator=(const SystemdNotifier&) = delete;

  // Every worker started: READY=1, with the addresses bound in STATUS.
  void ready(Server& first);
  // The hot reload (server/config_reload.cpp): RELOADING=1 before the file is read again,
  // reloaded() once the new one is in force or refused.
  void reloading();
  void reloaded(const std::string& status);

 private:
  static void on_signal(uv_signal_t* handle, int signum);
  void send(const std::string& state);

  bool active_ = false;  // NOTIFY_SOCKET set and libsystemd built in
  bool stopping_ = false;
  int64_t drain_ms_ = 0;
  std::array<uv_signal_t, 2> signals_{};
};

}  // namespace sluice::server
