// ProxyHeaderReader: the first step of every connection accepted on a listener with
// proxy_protocol (docs/proxy_protocol.md). It owns the accepted socket until its PROXY header has
// arrived, then hands the socket and the client's address to the owner (Server for RTMP and
// RTMPS, HttpService for HTTP and HTTPS), which opens the connection as if the client had
// connected itself: logs, address rules, limits.per_ip, hooks and the API all see that address.
//
// Lifecycle:
//  1. start(fd, ...) takes the socket. A peer outside a non-empty proxy_protocol_from is a direct
//     client: on_ready runs at once with its own address, nothing read.
//  2. The header is read with MSG_PEEK and only its own bytes are taken from the kernel, so the
//     client's first bytes (RTMP handshake, TLS ClientHello, HTTP request) stay in the socket for
//     the connection that adopts it: nothing is copied or handed over besides the fd.
//  3. A valid header: on_ready(fd, peer) runs, with the header's source for a proxied client and
//     the socket's own peer for a LOCAL (health check) or UNKNOWN header. A malformed header, end
//     of stream or no complete header within the timeout: the socket is closed with one log line,
//     and nothing else happened (no connection object, no per-IP slot, no hook).
//  4. close_all() (the server stops) closes the sockets still waiting. Every pending socket has a
//     poll handle and a timer; it frees itself once both have closed.
// Everything runs on the owner's loop; no callback throws.
#pragma once

#include <uv.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <unordered_set>
#include <vector>

#include "config/address.hpp"
#include "server/io/net_address.hpp"

namespace sluice::server {

class ProxyHeaderReader {
 public:
  // fd is the socket positioned at the client's first byte; the callee owns it.
  using OnReady = std::function<void(int fd, uint64_t id, bool tls, PeerAddress peer)>;

  // One listener family's settings: its name in logs ("rtmp", "https"), who may send headers.
  struct Family {
    const char* proto = "rtmp";
    bool tls = false;
    std::span<const config::Cidr> from;  // empty: any peer; must outlive the reader (the Config's)
  };

  ProxyHeaderReader(uv_loop_t* loop, std::chrono::milliseconds timeout, OnReady on_ready);
  ProxyHeaderReader(const ProxyHeaderReader&) = delete;
  ProxyHeaderReader& operator=(const ProxyHeaderReader&) = delete;
  ~ProxyHeaderReader();

  // Takes the accepted socket fd; id names the connection in the log lines.
  void start(int fd, uint64_t id, const Family& family);
  // Closes every socket still waiting for its header (no log line each: the server stops).
  void close_all();
  size_t pending() const { return pending_.size(); }

  // How long a listener waits for the header: half the handshake timeout, at most 5 s (the
  // specification asks for at least 3 s when nothing shorter is configured).
  static std::chrono::milliseconds timeout_for(std::chrono::milliseconds handshake_timeout);

 private:
  struct Pending;
  friend struct Pending;
  void finish(Pending* p);

  uv_loop_t* loop_;
  std::chrono::milliseconds timeout_;
  OnReady on_ready_;
  std::unordered_set<Pending*> pending_;
};

}  // namespace sluice::server
