// What every listener of the server (RTMP, RTMPS, HTTP, HTTPS, on every loop) applies to the
// connections it accepts, in one place (docs/architecture.md, "Accepting"):
//
//  - DescriptorReserve: at the descriptor limit a pending connection is accepted with a spare
//    descriptor and closed at once (counted, logged at most once a second), so no client waits in
//    the backlog for an answer that never comes. The spares are the process's (the limit is), and
//    every listener's accept goes through the reserve's lock: a spare closed to make room is taken
//    by that refusal, not by another loop's accept in between. When no spare can be had (another
//    open took the room), the listener stops polling for kPauseMs instead of waking up for a socket
//    it cannot accept (server/io/listener.cpp).
//  - AdmissionPolicy: rtmp.max_connections (every protocol and loop together, with the sockets still
//    waiting for their PROXY header) and limits.per_ip: the verdict, the counter and the
//    rate-limited log line. Each protocol answers a refusal its own way (RTMP closes, HTTP says
//    503 or 429).
// The bound on accepts per loop iteration is TcpListener's (it owns the loop's turn).
#pragma once

#include <sys/socket.h>

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "server/io/guard_counters.hpp"

namespace sluice::server {

class DescriptorReserve {
 public:
  // A listener with no room waits this long before it polls its socket again.
  static constexpr uint64_t kPauseMs = 100;

  // `spares` descriptors are kept open (on /dev/null) to be spent at the limit.
  explicit DescriptorReserve(size_t spares = 2);
  ~DescriptorReserve();
  DescriptorReserve(const DescriptorReserve&) = delete;
  DescriptorReserve& operator=(const DescriptorReserve&) = delete;

  // The process's reserve, which every listener uses unless given another (tests).
  static DescriptorReserve& process();

  enum class Outcome {
    Accepted,        // `fd` is the connection's (non-blocking, close-on-exec)
    NothingPending,  // the backlog is empty
    Refused,         // at the limit: one pending connection was accepted with a spare and closed
    NoRoom,          // at the limit and no spare to spend: try again later
    Failed,          // another accept error (errno in `error`)
  };
  struct Result {
    Outcome outcome;
    int fd = -1;
    int error = 0;  // errno of the accept that failed (Refused, NoRoom, Failed)
  };
  // One accept on `listen_fd`; at the descriptor limit, one refusal with a spare.
  Result accept(int listen_fd, sockaddr_storage& peer);

  size_t spares() const;

 private:
  void refill_locked();
  Result refuse_locked(int listen_fd, int error);

  mutable std::mutex mutex_;
  size_t wanted_;
  std::vector<int> spares_;
};

class AdmissionPolicy {
 public:
  // proto names the refusals in logs ("rtmp", "http").
  explicit AdmissionPolicy(const char* proto) : proto_(proto) {}

  // The refusal reason when `open` connections (every protocol and loop, the new one not counted)
  // already reach `max` (0: no limit); counted as a connection_limit guard event. Empty: admitted.
  std::string over_limit(size_t open, uint32_t max) const;
  // The same verdict without counting it (a socket that is not refused yet, only routed).
  static bool full(size_t open, uint32_t max) { return max != 0 && open >= max; }

  // limits.per_ip refused connection `id` from `peer`: counted, and logged at most once a second
  // with how many were left out.
  void per_ip_refused(uint64_t id, std::string_view peer, uint32_t per_ip, uint64_t now_ms);

 private:
  const char* proto_;
  LogRateLimit per_ip_log_;
};

}  // namespace sluice::server
