// RtmpConnection: one RTMP client socket. Owns the uv_tcp_t, a protocol::Session and the write path,
// and the publishers and players of the streams the client opened on this connection.
//
// Lifecycle (libuv rules): created by the listener, deleted only from the uv_close callback.
// close() is idempotent; schedule_close() defers it to the end of the loop iteration, which is
// what code running inside a hub's fan-out must use.
#pragma once

#include <uv.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "protocol/session.hpp"
#include "server/io/write_batch.hpp"
#include "server/io/write_ring.hpp"

namespace sluice::config {
struct AppConfig;
}

namespace sluice::server {

class Server;
class LivePlayer;
class LivePublisher;
class VodPlayer;

class RtmpConnection final : public RingWriteTarget {
 public:
  RtmpConnection(Server& server, uint64_t id);
  RtmpConnection(const RtmpConnection&) = delete;
  RtmpConnection& operator=(const RtmpConnection&) = delete;

  // Accepts a pending connection from the listener and starts reading. On error the caller
  // closes the handle with close().
  int accept(uv_stream_t* listener);
  // The same for a socket another worker accepted (see Server::hand_over); takes ownership of fd.
  int adopt(int fd);

  void close(const std::string& reason);
  void schedule_close(std::string reason);
  bool closing() const { return closing_; }

  // Marks the connection as having output; the server flushes it once per loop iteration.
  void request_flush();
  // Live media: may wait up to rtmp.player_queue.write_delay to go out with what follows.
  void request_held_flush();
  // Writes whatever is pending as one batch, unless a write is in flight. Inside the server's
  // flush pass the batch is queued on the loop's WriteRing instead and written by its submit.
  void flush();
  void on_ring_write(int result) override;
  // True when bytes may go straight to the socket: nothing produced earlier is still waiting
  // (session output, a write in flight) and the connection is not closing.
  bool can_write_now() const;
  // Writes bytes produced while can_write_now() with one uv_try_write; what the socket does not
  // take is queued as session output and flushed as usual. True when all of it went out. Never
  // closes the connection on the spot (a failed write closes it at the end of the iteration).
  bool write_now(std::span<const uint8_t> bytes);
  // Called about once a second: timeouts and keep-alive pings.
  void on_tick(uint64_t now_ms);
  // Server shutdown: tell the peer its streams end, then close once the bytes are out.
  void shutdown_gracefully();

  protocol::Session& session() { return session_; }
  uint64_t id() const { return id_; }
  const std::string& peer() const { return peer_; }
  const std::string& app() const { return app_; }
  // Bytes handed to the socket but not yet written: the kernel-side part of a player's backlog.
  size_t write_queue_bytes() const;
  Server& server() { return server_; }
  uint64_t bytes_in() const { return bytes_in_; }
  uint64_t bytes_out() const { return bytes_out_; }
  uint64_t started_ms() const { return started_ms_; }

  // Bookkeeping for the server's per-iteration flush list.
  bool in_flush_list = false;
  bool in_delayed_list = false;
  std::string pending_close_reason;

 private:
  int start_reading();
  void resume_vod_players();
  static void on_alloc(uv_handle_t* handle, size_t suggested, uv_buf_t* buf);
  static void on_read(uv_stream_t* stream, ssize_t nread, const uv_buf_t* buf);
  static void on_write(uv_write_t* req, int status);
  static void on_closed(uv_handle_t* handle);

  // A write's result (bytes or a libuv error): done, close, or hand the rest to uv_write.
  void finish_write(int result);
  void on_bytes(std::span<const uint8_t> bytes);
  void handle_event(protocol::SessionEvent& event);
  void on_connect(protocol::ConnectEvent& e);
  void on_publish(protocol::PublishEvent& e);
  void on_play(protocol::PlayEvent& e);
  void on_pause(const protocol::PauseEvent& e);
  void on_seek(const protocol::SeekEvent& e);
  void on_get_stream_length(const protocol::GetStreamLengthEvent& e);
  void on_play_vod(const config::AppConfig& app, protocol::PlayEvent& e);
  void on_receive_media(const protocol::ReceiveMediaEvent& e);
  void on_close_stream(uint32_t stream_id, const char* why);
  void on_unpublish(const protocol::UnpublishEvent& e);
  void on_media(protocol::MediaEvent& e);
  bool publish_allowed(const config::AppConfig& app, const protocol::PublishCommand& p, std::string& why) const;
  LivePlayer* find_player(uint32_t stream_id);
  LivePublisher* find_publisher(uint32_t stream_id);
  VodPlayer* find_vod_player(uint32_t stream_id);
  void end_streams();

  uv_tcp_t tcp_{};
  Server& server_;
  uint64_t id_;
  std::string peer_;
  std::vector<uint8_t> peer_address_;  // raw bytes for CIDR checks
  std::string app_;
  std::string stream_prefix_;  // from an app of the form "app/instance" (librtmp URLs)
  protocol::Session session_;
  WriteBatch batch_;
  std::vector<protocol::SessionEvent> events_;
  std::vector<std::unique_ptr<LivePlayer>> players_;
  std::vector<std::unique_ptr<LivePublisher>> publishers_;
  std::vector<std::unique_ptr<VodPlayer>> vod_players_;
  // Callbacks from the threadpool (file lookups) check this before touching the connection.
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
  bool writing_ = false;
  bool ring_queued_ = false;   // batch_ is queued on the ring, not yet submitted
  bool more_to_flush_ = false;  // the players had more than one batch can hold
  bool closing_ = false;
  bool connected_ = false;
  uint64_t started_ms_ = 0;
  uint64_t last_receive_ms_ = 0;
  uint64_t last_ping_ms_ = 0;
  uint64_t bytes_in_ = 0;
  uint64_t bytes_out_ = 0;
};

}  // namespace sluice::server
