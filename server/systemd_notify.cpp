#include "server/systemd_notify.hpp"

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <vector>

#include "server/http/service.hpp"
#include "server/io/logging.hpp"
#include "server/server.hpp"

#ifndef SLUICE_HAVE_LIBSYSTEMD
#define SLUICE_HAVE_LIBSYSTEMD 0
#endif
#if SLUICE_HAVE_LIBSYSTEMD
#include <systemd/sd-daemon.h>
#endif

namespace sluice::server {

SystemdNotifier::SystemdNotifier(uv_loop_t* loop, int64_t drain_ms) : drain_ms_(drain_ms) {
  const char* socket = std::getenv("NOTIFY_SOCKET");
  active_ = SLUICE_HAVE_LIBSYSTEMD && socket != nullptr && *socket != '\0';
  if (!active_) return;
  const int signums[2] = {SIGTERM, SIGINT};
  for (size_t i = 0; i < signals_.size(); ++i) {
    uv_signal_init(loop, &signals_[i]);
    signals_[i].data = this;
    uv_signal_start(&signals_[i], &SystemdNotifier::on_signal, signums[i]);
    uv_unref(reinterpret_cast<uv_handle_t*>(&signals_[i]));
  }
}

void SystemdNotifier::ready(Server& first) {
  std::vector<std::string> addresses = first.bound_addresses();
  if (first.http() != nullptr) {
    for (const auto& a : first.http()->bound_addresses()) addresses.push_back("http " + a);
  }
  std::string status = "READY=1\nSTATUS=Serving";
  for (size_t i = 0; i < addresses.size(); ++i) status += (i == 0 ? " on " : ", ") + addresses[i];
  send(status);
}

void SystemdNotifier::reloading() {
  // MONOTONIC_USEC: systemd 253's Type=notify-reload matches the reload by it.
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  const auto usec = static_cast<uint64_t>(now.tv_sec) * 1000000 + static_cast<uint64_t>(now.tv_nsec) / 1000;
  send("RELOADING=1\nMONOTONIC_USEC=" + std::to_string(usec) + "\nSTATUS=Reloading the configuration");
}

void SystemdNotifier::reloaded(const std::string& status) { send("READY=1\nSTATUS=" + status); }

void SystemdNotifier::on_signal(uv_signal_t* handle, int signum) {
  auto* self = static_cast<SystemdNotifier*>(handle->data);
  // A second signal stops a drain at once; systemd heard STOPPING=1 the first time.
  if (self->stopping_) return;
  self->stopping_ = true;
  const std::string name = signum == SIGINT ? "SIGINT" : "SIGTERM";
  if (self->drain_ms_ > 0) {
    self->send("STOPPING=1\nSTATUS=Draining after " + name + ": sessions may go on for up to " +
               std::to_string(self->drain_ms_ / 1000) + " s");
  } else {
    self->send("STOPPING=1\nSTATUS=Stopping after " + name);
  }
}

void SystemdNotifier::send(const std::string& state) {
  if (!active_) return;
#if SLUICE_HAVE_LIBSYSTEMD
  const int rc = sd_notify(0, state.c_str());
  if (rc < 0) SLUICE_LOG_WARN("event=sd_notify_failed error=\"{}\"", std::strerror(-rc));
#else
  (void)state;
#endif
}

}  // namespace sluice::server
