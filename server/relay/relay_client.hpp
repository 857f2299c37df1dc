// RelayClient: the server's own outgoing RTMP(S) connection, for a push target (it publishes a
// local stream there) or a pull (it plays a stream there for the local hub). A SessionSocket
// (server/live/session_socket.hpp) on the client side of protocol::Session: resolve, connect, [TLS], handshake,
// connect, createStream, then publish or play. It owns nothing that outlives it: its Owner (a PushTarget or a Pull,
// server/relay/) keeps the state across reconnections and is told once when the connection ends, with why.
//
// Push: once the target accepted the publish, a RelaySink (a LiveSubscriber, the same queue and
// slow-player policy as players: a slow or dead target never slows anyone else) joins the local
// hub, which replays metadata, sequence headers and the GOP from its keyframe; so every
// (re)connection starts on a keyframe. When the source ends, FCUnpublish and deleteStream go out
// behind the last frame, then the connection closes.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "protocol/session.hpp"
#include "server/io/tls_context.hpp"
#include "server/live/session_socket.hpp"
#include "server/relay/relay_link.hpp"
#include "server/relay/relay_url.hpp"

namespace sluice::media {
class StreamHub;
}

namespace sluice::server {

class StreamRegistry;
class RelaySink;

class RelayClient final : public SessionSocket, public RelayLink {
 public:
  using Role = RelayLink::Role;
  using Owner = RelayLink::Owner;
  using Settings = RelayLink::Settings;

  RelayClient(LoopContext& loop, uint64_t id, Settings settings, Owner* owner);

  // Resolves the host (threadpool) and connects; failures close the connection.
  void start() override;
  // Push: the source ended: FCUnpublish and deleteStream behind the frames still queued, then close.
  void finish_push();
  // The owner is going: the connection closes (a push sends its end first, reporting to `drain`,
  // which then owns it, meanwhile).
  void detach(const std::string& why, Owner* drain) override;
  void on_tick(uint64_t now_ms) override;
  void close_link(const std::string& reason) override { close(reason); }
  const SessionPeer& link_peer() const override { return *this; }

  bool is_live() const { return live_; }
  const Settings& settings() const { return settings_; }
  // The sink's end notice went into the batch: close once it is written.
  void close_after_written() { closing_after_write_ = true; }

 protected:
  ~RelayClient() override;

 private:
  static void on_resolved(uv_getaddrinfo_t* req, int status, addrinfo* res);
  void on_open() override;
  void on_session_event(protocol::SessionEvent& ev) override;
  bool fill(WriteBatch& batch, size_t max_bytes) override;
  void on_nothing_to_write() override;
  void on_written(bool async) override;
  void on_close(const std::string& reason) override;

  void on_result(const protocol::ResultEvent& e);
  void on_status(const protocol::StatusEvent& e);
  void go_live();

  Settings settings_;
  Owner* owner_;
  std::unique_ptr<RelaySink> sink_;
  uv_getaddrinfo_t resolve_{};
  uint32_t stream_id_ = 0;
  double connect_tx_ = 1;
  bool connected_ = false;
  bool live_ = false;
  bool ending_ = false;
  bool closing_after_write_ = false;
  bool media_flowing_ = false;
};

}  // namespace sluice::server
