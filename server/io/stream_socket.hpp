// StreamSocket: what every TCP connection of the server shares, whatever it speaks. Owns the
// uv_tcp_t; reads into the loop's one buffer; writes one WriteBatch at a time, queued on the
// loop's io_uring ring inside a flush pass or written at once with uv_try_write, the unwritten
// rest handed to uv_write; counts bytes; closes once; and keeps one lifetime rule.
//
// Lifetime (the one rule): a socket is created with new by its owner and deletes itself when
// its handle has closed and no retained job refers to it any more. Work that outlives a call
// (threadpool jobs, file handles) holds a SocketRef; its callback checks closing() before it
// touches the connection's state. close() is idempotent; schedule_close() defers the close to
// the next flush drain, which is what code inside a hub's fan-out must use.
//
// Writing: a subclass appends its output to the batch in fill(); the base decides when and how
// it reaches the socket (docs/architecture.md, "Writes"). Hooks are called on the loop only.
#pragma once

#include <uv.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "server/io/flush_scheduler.hpp"
#include "server/io/loop_context.hpp"
#include "server/io/net_address.hpp"
#include "server/io/player_output.hpp"
#include "server/io/tls_transform.hpp"
#include "server/io/write_batch.hpp"
#include "server/io/write_ring.hpp"

namespace sluice::server {

class StreamSocket : public Flushable, public RingWriteTarget, public PlayerOutput {
 public:
  // One batch carries at most this much, so one fast peer cannot monopolise a loop iteration.
  static constexpr size_t kBatchMaxBytes = 512 * 1024;

  StreamSocket(LoopContext& loop, uint64_t id);
  StreamSocket(const StreamSocket&) = delete;
  StreamSocket& operator=(const StreamSocket&) = delete;

  // Takes an accepted socket (TcpListener's, or one another worker accepted) and starts reading;
  // owns fd from here. On error the caller closes the socket with close().
  int adopt(int fd);
  // RTMPS (before adopt): the connection speaks TLS with this context; everything above the
  // socket sees plaintext (server/io/tls_transform.hpp).
  // A client (a relay to an rtmps:// server) names the server for SNI and verification.
  void use_tls(std::shared_ptr<const TlsContext> context, const std::string& server_name = "");
  // Before adopt: the client's address as a PROXY header gave it (server/io/proxy_header_reader.hpp)
  // stands for the socket's peer in peer() and peer_address(), so everything sees the client.
  void use_peer(PeerAddress peer);
  // What every service does with a socket it accepted or was handed: TLS with `tls` (null: none),
  // the client's address when known, then adopt(). False when adopt failed: the socket is closed
  // with the reason.
  bool open_accepted(int fd, std::shared_ptr<const TlsContext> tls, std::optional<PeerAddress> peer);
  // An outgoing connection (relays): connects to addr and starts reading once connected, as
  // adopt() does for accepted ones. A failure to connect closes the socket ("connect failed: ...").
  int connect(const sockaddr* addr);
  bool tls() const { return tls_ != nullptr; }
  // The loop's HandshakeGate deferred this socket's handshake reads; it reads again now.
  void resume_handshake_reads();
  std::string tls_summary() const { return tls_ ? tls_->summary() : "-"; }  // TlsTransform::summary

  void close(const std::string& reason) final;
  void schedule_close(std::string reason) override;
  bool closing() const { return closing_; }
  // Closed, or about to be at the next drain.
  bool closing_soon() const override { return closing_ || !pending_close_reason.empty(); }

  // Output is written at the end of this loop iteration (flush soon) or, for live media, within
  // rtmp.player_queue.write_delay (flush held).
  void request_flush() override;
  void request_held_flush() override;
  // Writes what fill() gives as one batch, unless a write is in flight.
  void flush() final;
  void on_ring_write(int result) final;

  // Writes bytes produced outside fill() (a VOD player's wire buffer) after everything produced
  // before them: with one uv_try_write when nothing else waits, so the caller's buffer needs no
  // copy; what the socket does not take, or all of it when output is waiting, goes to
  // keep_unwritten() and is flushed as usual. True when all of it went out now. Never closes on
  // the spot (a failed write closes at the next drain): the caller is on the stack.
  bool write_or_queue(std::span<const uint8_t> bytes);

  // Bytes handed to the socket but not yet written: the kernel-side part of a player's backlog.
  size_t write_queue_bytes() const override;

  uint64_t id() const override { return id_; }
  const std::string& peer() const override { return peer_; }
  // Raw peer address bytes for CIDR checks (4 or 16 bytes).
  const std::vector<uint8_t>& peer_address() const { return peer_address_; }
  uint64_t bytes_in() const override { return bytes_in_; }
  uint64_t bytes_out() const override { return bytes_out_; }
  bool over_tls() const override { return tls(); }
  uint64_t started_ms() const { return started_ms_; }
  LoopContext& loop_context() { return loop_; }
  const LoopContext& loop_context() const { return loop_; }

  // Keeps the object (not the connection: it may close meanwhile) for work that outlives a call.
  class Ref {
   public:
    explicit Ref(StreamSocket* s) : s_(s) { s_->retain(); }
    Ref(const Ref& o) : s_(o.s_) { s_->retain(); }
    Ref& operator=(const Ref&) = delete;
    ~Ref() { s_->release(); }
    StreamSocket* get() const { return s_; }

   private:
    StreamSocket* s_;
  };

 protected:
  virtual ~StreamSocket() = default;

  // Called once the socket is open (accepted or adopted), before reading starts.
  virtual void on_open() {}
  // Received bytes (never empty). The buffer is the loop's: copy what must outlive the call.
  virtual void on_bytes(std::span<const uint8_t> bytes) = 0;
  // The peer sent FIN.
  virtual void on_peer_closed() { close("peer closed"); }
  // Start of flush(): false when nothing may be written now (the subclass is busy otherwise).
  virtual bool before_flush() { return true; }
  // Appends output to the batch, at most max_bytes more; true when more remains after it.
  virtual bool fill(WriteBatch& batch, size_t max_bytes) = 0;
  // flush() found nothing to write.
  virtual void on_nothing_to_write() {}
  // The whole batch is written (async: by libuv's callback, after a flush already ran again).
  virtual void on_written(bool async) { (void)async; }
  // What write_or_queue() did not write now, to go out after the output queued so far.
  virtual void keep_unwritten(std::span<const uint8_t> rest) = 0;
  // Output produced but not yet in a batch (write_or_queue() must not overtake it).
  virtual bool has_pending_output() const { return false; }
  // close() was called: end what the connection holds and log. The socket is still open.
  virtual void on_close(const std::string& reason) = 0;
  // TCP_NODELAY from the start (the default). A subclass whose first answer may be its only one
  // says false and calls set_nodelay() once more small writes may follow (HTTP: keep-alive).
  virtual bool nodelay_at_open() const { return true; }
  // An accepted socket still in a handshake (TLS here; RTMP's in SessionSocket): its reads are
  // rationed per loop iteration (server/io/handshake_gate.hpp).
  virtual bool handshake_pending() const { return tls_ != nullptr && !tls_->handshake_done(); }
  void set_nodelay();

  uv_tcp_t* tcp() { return &tcp_; }
  int start_reading();
  void stop_reading();
  bool reading() const { return reading_; }
  // A batch is queued on the ring or being written by libuv.
  bool write_in_flight() const { return writing_ || ring_queued_; }
  // When bytes were last written (or the socket opened): for send timeouts.
  uint64_t last_write_ms() const { return last_write_ms_; }
  void note_write_progress() { last_write_ms_ = loop_.now_ms(); }
  // Bytes a subclass wrote around the batch path (sendfile).
  void add_bytes_out(uint64_t n) { bytes_out_ += n; }
  // A job that refers to this object starts (retain) or ends (release: may delete it).
  void retain() { ++retained_; }
  void release();
  // Takes over one earlier retain() when its job completes: released when the Ref goes, so the
  // completion handler may use the object to its end.
  Ref take_retained() {
    Ref r(this);
    --retained_;
    return r;
  }

  LoopContext& loop_;

 private:
  // True when bytes may go straight to the socket: nothing produced earlier is still waiting and
  // the connection is not closing.
  bool can_write_now() const;
  int open_accepted();
  static void on_alloc(uv_handle_t* handle, size_t suggested, uv_buf_t* buf);
  static void on_read(uv_stream_t* stream, ssize_t nread, const uv_buf_t* buf);
  static void on_write(uv_write_t* req, int status);
  static void on_handle_closed(uv_handle_t* handle);
  static void on_connected(uv_connect_t* req, int status);
  // A write's result (bytes or a libuv error): done, close, or hand the rest to uv_write.
  void finish_write(int result);
  void write_done(bool async);
  void maybe_delete();

  uv_tcp_t tcp_{};
  uv_connect_t connect_req_{};
  uint64_t id_;
  std::string peer_;
  std::vector<uint8_t> peer_address_;
  WriteBatch batch_;
  // TLS: the transform, and the ciphertext that waits for the socket. A batch is encrypted as one
  // piece and sent from here (through the ring inside a flush pass), never by the batch's own write.
  struct TlsWrite;
  void on_tls_bytes(std::span<const uint8_t> cipher);
  void send_tls_batch(std::span<const uv_buf_t> bufs);
  void finish_tls_ring_write(int result);
  void send_tls_output();
  static void on_tls_written(uv_write_t* req, int status);
  std::unique_ptr<TlsTransform> tls_;
  ByteBuffer tls_out_;
  std::vector<uint8_t> tls_plain_;                    // the loop's reads, decrypted (reused)
  std::vector<std::span<const uint8_t>> tls_pieces_;  // a batch's pieces, for encryption (reused)
  ByteBuffer tls_ring_bytes_;                         // ciphertext queued on the ring, until its completion
  uv_buf_t tls_ring_buf_{};                           // ... and the one-entry buffer list the ring reads
  bool tcp_initialized_ = false;
  bool peer_given_ = false;  // use_peer(): the socket's own peer is not looked up
  bool handle_closed_ = false;
  bool reading_ = false;
  bool nodelay_ = false;
  bool writing_ = false;        // batch_ is with uv_write
  bool ring_queued_ = false;    // batch_ is queued on the ring, not yet submitted
  bool more_to_flush_ = false;  // fill() had more than one batch can hold
  bool closing_ = false;
  bool accepted_ = false;            // adopt(): a peer's connection, not one of ours
  bool handshake_deferred_ = false;  // waiting in the loop's HandshakeGate
  int retained_ = 0;
  uint64_t started_ms_ = 0;
  uint64_t last_write_ms_ = 0;
  uint64_t bytes_in_ = 0;
  uint64_t bytes_out_ = 0;
};

}  // namespace sluice::server
