// RtmpConnection: one RTMP client socket. A SessionSocket (server/live/session_socket.hpp: a
// StreamSocket that speaks RTMP through a protocol::Session) that holds the publishers and players of the streams the
// client opened on this connection. The command handling is in commands.cpp.
//
// Lifetime: the StreamSocket rule. Work off the loop (a VOD file lookup) holds a Ref and checks
// closing() when it completes.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "protocol/session.hpp"
#include "server/access/access_ticket.hpp"
#include "server/access/gate.hpp"
#include "server/access/peer_limits.hpp"
#include "server/io/guard_counters.hpp"
#include "server/io/output_guard.hpp"
#include "server/io/reassembly_budget.hpp"
#include "server/io/stream_socket.hpp"
#include "server/live/session_socket.hpp"
#include "server/live/stream_registry.hpp"
#include "server/ingest/publish_claim.hpp"
#include "server/ingest/publish_services.hpp"

namespace sluice::config {
struct AppConfig;
}

namespace sluice::server {

class LivePlayer;
class LivePublisher;
class StreamRegistry;
class VodFiles;
class VodPlayer;
class RtmpConnection;
class RelayManager;
class HlsService;
namespace cluster {
class ClusterService;
}

// What an RTMP connection reaches beyond its loop. The composition root owns all of it, one per
// worker loop, and it outlives every connection.
struct RtmpServices {
  // The loop, its registry and gate, and what a publish starts (relays, HLS, the cluster's claim).
  PublishServices& publish;
  VodFiles& vod_files;
  // Told when a connection object is destroyed (the root keeps the set of connections).
  std::function<void(RtmpConnection*)> on_destroyed;
  // The node drains (server/drain.cpp): a client whose connect is accepted from now on is asked
  // at once to reconnect elsewhere, if it can.
  bool draining = false;
};

class RtmpConnection final : public SessionSocket, public PublisherHost {
 public:
  RtmpConnection(RtmpServices& services, uint64_t id);

  // limits.per_ip: false when the peer's address holds its maximum of connections (the caller
  // closes this one).
  bool take_peer_slot(uint32_t per_ip) { return peer_slot_.take(peer_address(), per_ip); }

  // Called about once a second: timeouts and keep-alive pings.
  void on_tick(uint64_t now_ms);
  // Server shutdown: tell the peer its streams end, then close once the bytes are out.
  void shutdown_gracefully();
  // The first step of a server stop, on every connection before any shutdown_gracefully(): the
  // publications end, so their players everywhere are told before they are shut down.
  void end_publishers(const std::string& reason);
  // Draining (server/drain.cpp): a client that announced Enhanced RTMP reconnect support in its
  // connect (capsEx) is asked to reconnect to the tcUrl it came with, which the load balancer
  // sends elsewhere (docs/protocol.md, "Reconnect requests"). False, and nothing sent, for others.
  bool request_reconnect();

  // "app/stream" of every stream this connection plays (live and VOD), for the stats API.
  std::vector<std::string> playing_streams() const;
  // The recordings of the streams it publishes (apps.NAME.record), for the stats API.
  struct RecordingInfo {
    std::string stream;  // "app/stream"
    std::string path;    // the .part being written
    uint64_t bytes = 0;
    uint32_t duration_ms = 0;
  };
  std::vector<RecordingInfo> recordings() const;
  // The API's start and stop of a recording (record.mode manual, or all), for the stream `key`
  // ("app/stream") if this connection publishes it.
  enum class RecordControl : uint8_t { Done, AlreadyRecording, NotRecording, NotPublishedHere, AppDoesNotRecord };
  RecordControl control_recording(const std::string& key, bool start);
  const std::string& app() const { return app_; }
  const config::Config& config() const { return loop_.config(); }
  StreamRegistry& registry() { return services_.publish.registry; }
  VodFiles& vod_files() { return services_.vod_files; }
  AccessGate& gate() { return services_.publish.gate; }
  RelayManager* relays() { return services_.publish.relays; }
  cluster::ClusterService* cluster() { return services_.publish.cluster; }
  HlsService* hls() { return services_.publish.hls; }

  // PublisherHost (server/ingest/publish_services.hpp).
  const SessionPeer& publishing_peer() const override { return *this; }
  PublishServices& publish_services() override { return services_.publish; }
  // Who this connection is, for hooks about one of its streams (client, address, app, tcUrl...).
  HookEvent hook_base_event(const std::string& stream) const override { return hook_event(stream, ""); }
  // A new publisher took the name of this connection's publisher on `stream_id` (LivePublisher's
  // give_up): it ends, the client is told why, and the connection closes a second later (unless
  // the same connection published the name again).
  void end_replaced_publisher(uint32_t stream_id, const std::string& why, bool same_connection) override;

 protected:
  ~RtmpConnection() override;

 private:
  // StreamSocket and SessionSocket hooks.
  void on_open() override;
  void on_session_event(protocol::SessionEvent& event) override;
  void on_protocol_error(const std::string& message, std::span<const uint8_t> bytes) override;
  void after_events() override;
  bool fill(WriteBatch& batch, size_t max_bytes) override;
  void on_nothing_to_write() override;
  void on_written(bool async) override;
  void on_close(const std::string& reason) override;

  void resume_vod_players();
  // The unsent output against rtmp.limits: stop reading, resume, or close (server/io/output_guard.hpp).
  void check_output();
  void handle_event(protocol::SessionEvent& event);
  void on_connect(protocol::ConnectEvent& e);
  void on_publish(protocol::PublishEvent& e);
  void on_play(protocol::PlayEvent& e);
  void on_play_live(const config::AppConfig& app, protocol::PlayEvent& e);

  // Admission (admission.cpp): the access gate's decision, maybe from a hook. While one is
  // pending the connection stops reading and holds the events that follow, so they are handled
  // after it, in order.
  void ask(const std::function<uint64_t(AccessDone)>& start, std::function<void(AccessOutcome&&)> then);
  void after_decision();
  void handle_held_events();
  HookEvent hook_event(const std::string& stream, const std::string& query) const;
  AccessTicket ticket_for(AccessAction action, const std::string& stream, const std::string& query, Seat seat);
  void note_lifetime(uint64_t lifetime_s);
  void finish_connect(AccessOutcome&& o);
  // The app as it was when the request came: a reload in between changes only the next request.
  void finish_publish(const protocol::PublishEvent& e, const config::AppRef& app, AccessOutcome&& o);
  // The answer of claim_publish (server/ingest/publish_claim.hpp): publish, or refuse.
  void publish_here(const protocol::PublishEvent& e, const config::AppConfig& app, AccessOutcome&& o,
                    const PublishClaim& claim);
  void finish_play_live(const protocol::PlayEvent& e, const config::AppConfig& app, AccessOutcome&& o);
  void finish_play_vod(const protocol::PlayEvent& e, const config::AppConfig& app, AccessOutcome&& o);
  // Logs and answers a refusal by the gate; a refused publisher or player is then closed.
  void refuse_admission(uint32_t stream_id, bool publish, const std::string& name, const AccessOutcome& o);
  void on_pause(const protocol::PauseEvent& e);
  void on_seek(const protocol::SeekEvent& e);
  void on_get_stream_length(const protocol::GetStreamLengthEvent& e);
  void on_play_vod(const config::AppConfig& app, protocol::PlayEvent& e);
  // Refuses a VOD play with NetStream.Play.Failed, counts it and logs it (at most once a second
  // per connection and bound: a flood of refusals is one line with the number suppressed).
  void refuse_vod_play(uint32_t stream_id, GuardEvent event, const std::string& name, const std::string& description);
  void on_receive_media(const protocol::ReceiveMediaEvent& e);
  void on_close_stream(uint32_t stream_id, const char* why);
  void on_stream_id_refused(const protocol::StreamIdRefusedEvent& e);
  void refuse_for_streams_total(uint32_t stream_id, const std::string& name, bool publish);
  void on_unpublish(const protocol::UnpublishEvent& e);
  void on_media(protocol::MediaEvent& e);
  LivePlayer* find_player(uint32_t stream_id);
  LivePublisher* find_publisher(uint32_t stream_id);
  VodPlayer* find_vod_player(uint32_t stream_id);
  void end_streams();

  RtmpServices& services_;
  std::string app_;
  std::string stream_prefix_;  // from an app of the form "app/instance" (librtmp URLs)
  std::vector<std::unique_ptr<LivePlayer>> players_;
  std::vector<std::unique_ptr<LivePublisher>> publishers_;
  std::vector<std::unique_ptr<VodPlayer>> vod_players_;
  LogRateLimit vod_name_refusal_log_;
  LogRateLimit vod_playlist_refusal_log_;
  bool connected_ = false;
  // Refusals a flood can repeat log at most once a second per connection.
  LogRateLimit log_limit_;
  uint64_t suppressed_logs_ = 0;
  OutputGuard output_guard_;
  ReassemblyLease reassembly_;
  uint64_t last_ping_ms_ = 0;
  PeerSlot peer_slot_;
  // Admission in progress (see ask()).
  bool waiting_ = false;
  bool asking_ = false;
  uint64_t pending_ = 0;  // the gate's id of the pending decision
  std::deque<protocol::SessionEvent> held_;
  uint64_t lifetime_deadline_ms_ = 0;  // a hook's session lifetime; 0: none
  uint64_t replaced_at_ms_ = 0;        // its publisher was taken over: closed at a tick a second later
};

}  // namespace sluice::server
