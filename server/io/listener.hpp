// TcpListener: one listening TCP socket of the server (RTMP or HTTP): binds, listens, reports the
// address actually bound (tests listen on port 0) and hands every pending connection to its
// owner, who accepts it onto a StreamSocket. IPv6 listeners are IPv6-only, so "0.0.0.0:1935" and
// "[::]:1935" can both be configured (docs/configuration.md).
#pragma once

#include <uv.h>

#include <functional>
#include <string>

#include "base/result.hpp"
#include "config/address.hpp"

namespace sluice::server {

class TcpListener {
 public:
  // on_pending(listener) must accept one connection (or close what it accepted).
  using OnPending = std::function<void(uv_stream_t* listener)>;

  // proto names the listener in logs and errors ("rtmp", "http").
  TcpListener(uv_loop_t* loop, const char* proto, OnPending on_pending);
  TcpListener(const TcpListener&) = delete;
  TcpListener& operator=(const TcpListener&) = delete;

  // Binds and listens; the error names the address.
  Result<void> listen(const config::ListenAddress& addr);
  const std::string& bound_address() const { return bound_; }
  // The handle memory must outlive the close: the owner keeps the object until the loop ends.
  void close();

 private:
  static void on_connection(uv_stream_t* listener, int status);

  uv_tcp_t tcp_{};
  const char* proto_;
  OnPending on_pending_;
  std::string bound_;
};

}  // namespace sluice::server
