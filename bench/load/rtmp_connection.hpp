// RtmpConnection: one TCP socket driving one client-role protocol::Session on the bench's loop.
//
// Why it looks like this: the bench must hold 2000+ connections without being the bottleneck.
//  - Reads land in one 64 KiB buffer shared by every connection (alloc_cb returns it, read_cb
//    feeds it to the session synchronously), so a connection costs no read buffer of its own.
//  - Session events go into one shared vector that is cleared right after they are handled, so
//    the media payload Slices are released before the next read.
//  - Writes: uv_try_write first, and at most one uv_write in flight; whatever the session queues
//    meanwhile goes out as one batch when it completes.
//  - rtmps://: a TlsClient sits between the socket and the session (reads are decrypted before
//    the session sees them, each write batch is encrypted as a whole); the session does not know.
//
// Lifecycle rules:
//  1. Construct, then start() once. The object must not move and must outlive its handle: it may
//     be destroyed only after close() and a loop run that let the close callback fire (the
//     runner closes everything, runs the loop dry, then destroys the clients).
//  2. The handler's on_connection_closed() is called once when the connection ends by itself
//     (connect error, EOF, read/write error, protocol error), never after a local close().
//  3. on_session_event() runs inside the read callback; it may call close(), and no later event
//     of that read is delivered then.
#pragma once

#include <uv.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bench/load/tls_client.hpp"
#include "protocol/session.hpp"

namespace sluice::bench {

class RtmpConnectionHandler {
 public:
  virtual void on_tcp_connected() = 0;
  virtual void on_session_event(protocol::SessionEvent& event) = 0;
  virtual void on_connection_closed(const std::string& reason) = 0;

 protected:
  ~RtmpConnectionHandler() = default;
};

class RtmpConnection {
 public:
  RtmpConnection(uv_loop_t* loop, RtmpConnectionHandler& handler, protocol::SessionOptions options);
  RtmpConnection(const RtmpConnection&) = delete;
  RtmpConnection& operator=(const RtmpConnection&) = delete;

  // Starts the TCP connect; the session's C0+C1 go out as soon as it completes (with TLS: once
  // the TLS handshake is done). Returns 0 or a libuv error; after an error the handler is not
  // called (libuv's rule). A non-empty tls_server_name makes it RTMPS, with that name as SNI.
  int start(const sockaddr* addr, const std::string& tls_server_name = {});

  protocol::Session& session() { return session_; }
  // Sends whatever the session has queued. Call after any request made outside a read callback.
  void flush();
  // Closes the socket; idempotent.
  void close();
  // Ends the connection because of an error, telling the handler once.
  void fail(const std::string& reason);

  // Bytes read from / written to the socket (with TLS: ciphertext, records and handshake included).
  uint64_t bytes_in() const { return bytes_in_; }
  uint64_t bytes_out() const { return bytes_out_; }
  // TLS: TCP connected -> TLS handshake done, in ns; -1 without TLS or before it is done.
  int64_t tls_handshake_ns() const { return tls_handshake_ns_; }
  // "TLSv1.3 TLS_AES_256_GCM_SHA384": what the first handshake of the process negotiated ("" if none).
  static const std::string& tls_negotiated();
  // Bytes handed to the socket layer but not yet written (ours plus libuv's queue).
  size_t write_backlog() const;
  // Asks the kernel not to wake us before this many bytes are buffered (SO_RCVLOWAT); 0 = off.
  // Only once media flows: during the handshake and commands it would hold small replies back.
  void set_receive_low_water(uint32_t bytes);

  // Reads done by all connections of the process, and their bytes: the average read size says
  // how many syscalls the bench paid per byte.
  static uint64_t total_reads();
  static uint64_t total_read_bytes();

 private:
  static void on_connect(uv_connect_t* req, int status) noexcept;
  static void on_alloc(uv_handle_t* handle, size_t suggested, uv_buf_t* buf) noexcept;
  static void on_read(uv_stream_t* stream, ssize_t nread, const uv_buf_t* buf) noexcept;
  static void on_write(uv_write_t* req, int status) noexcept;
  static void on_close(uv_handle_t* handle) noexcept;

  void handle_read(const uint8_t* data, size_t len);
  void start_write();

  RtmpConnectionHandler& handler_;
  protocol::Session session_;
  std::unique_ptr<TlsClient> tls_;  // rtmps:// only
  int64_t tls_start_ns_ = 0;
  int64_t tls_handshake_ns_ = -1;
  uv_tcp_t tcp_{};
  uv_connect_t connect_req_{};
  uv_write_t write_req_{};
  std::vector<uint8_t> out_;  // the batch being written (or about to be)
  size_t out_offset_ = 0;     // bytes of out_ uv_try_write already sent
  uint64_t bytes_in_ = 0;
  uint64_t bytes_out_ = 0;
  bool connected_ = false;
  bool writing_ = false;
  bool closing_ = false;
};

}  // namespace sluice::bench
