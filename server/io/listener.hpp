// TcpListener: one listening TCP socket of the server (RTMP or HTTP): binds, listens, reports the
// address actually bound (tests listen on port 0) and hands every accepted socket to its owner.
// IPv6 listeners are IPv6-only, so "0.0.0.0:1935" and "[::]:1935" can both be configured
// (docs/configuration.md).
//
// Shared (SO_REUSEPORT, the HTTP side, docs/http.md "HTTP on every loop"): each worker loop has its
// own socket on the same address and the kernel spreads new connections over them, so no loop
// hands sockets to another. The first loop's socket is bound only after a plain bind of the
// address succeeded (a second Sluice, or anything else, on the port is refused as before instead
// of silently getting half the connections); the others join the port it got.
//
// It accepts itself (a poll handle on the listening socket, not uv_listen) for two bounds:
// at most accepts_per_iteration connections per loop iteration, so a flood of connects cannot
// stall the players of this loop (the socket stays readable and the rest come next iteration);
// and at the file descriptor limit each refused connection is taken with a spare descriptor of the
// DescriptorReserve (server/io/accept_policy.hpp), closed, counted and logged (rate-limited),
// instead of libuv dropping it silently. With no spare to spend it pauses its poll for a moment
// rather than wake up again and again for a socket it cannot accept.
#pragma once

#include <uv.h>

#include <functional>
#include <string>

#include "base/result.hpp"
#include "config/address.hpp"
#include "server/io/accept_policy.hpp"
#include "server/io/guard_counters.hpp"

namespace sluice::server {

class TcpListener {
 public:
  // on_accepted(fd, peer) owns the non-blocking, close-on-exec socket: it adopts or closes it.
  // peer is the client's address as accept() gave it (saves a getpeername per connection).
  using OnAccepted = std::function<void(int fd, const sockaddr_storage& peer)>;

  // proto names the listener in logs and errors ("rtmp", "http").
  TcpListener(uv_loop_t* loop, const char* proto, uint32_t accepts_per_iteration, OnAccepted on_accepted,
              DescriptorReserve& reserve = DescriptorReserve::process());
  TcpListener(const TcpListener&) = delete;
  TcpListener& operator=(const TcpListener&) = delete;
  ~TcpListener();

  enum class Sharing { Alone, FirstOfGroup, JoinGroup };
  // Binds and listens; the error names the address.
  Result<void> listen(const config::ListenAddress& addr, Sharing sharing = Sharing::Alone);
  // The address with the port actually bound (what JoinGroup listeners are given).
  const config::ListenAddress& bound() const { return bound_listen_; }
  const std::string& bound_address() const { return bound_; }
  // Stops accepting. The handle memory must outlive the close: the owner keeps the object until
  // the loop ends.
  void close();

 private:
  static void on_readable(uv_poll_t* poll, int status, int events);
  void accept_some();
  void log_refused(int err, const char* what);
  // No descriptor to accept or refuse with: the poll stops for DescriptorReserve::kPauseMs.
  void pause();

  uv_loop_t* loop_;
  uv_poll_t poll_{};
  uv_timer_t pause_timer_{};
  bool polling_ = false;
  bool paused_ = false;
  int fd_ = -1;
  DescriptorReserve& reserve_;
  const char* proto_;
  uint32_t accepts_per_iteration_;
  OnAccepted on_accepted_;
  std::string bound_;
  config::ListenAddress bound_listen_;
  LogRateLimit refused_log_;
  uint64_t refused_suppressed_ = 0;
};

}  // namespace sluice::server
