// WebrtcSession: one WHIP publisher or WHEP player on its worker loop (docs/webrtc.md). Made by the
// loop's WebrtcService from an offer the HTTP side admitted; it answers, then lives on the loop's
// UDP port:
//   1. ICE-lite: Binding requests with our ufrag are answered (protocol/webrtc/ice_lite.hpp); the
//      first authenticated one fixes the peer's address (a later nominated one may move it).
//   2. DTLS, passive (our answer says a=setup:passive), from that address: the peer's certificate
//      must have the offer's fingerprint (server/webrtc/dtls_transport.hpp); then SRTP keys.
//   3. Media: a WHEP player's frames go out as SRTP (server/webrtc/whep_player.hpp); a WHIP
//      publisher's name is claimed as an RTMP publisher's is (server/ingest/publish_claim.hpp),
//      and its RTP becomes hub frames (server/webrtc/whip_receiver.hpp). RTCP keeps it alive.
// Until 2 completes within webrtc.session_timeout, or when the peer falls silent that long, the
// service closes the session. Closing hands it back to the service, which deletes it on a later
// loop turn, so a close from inside any callback is safe.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "protocol/webrtc/sdp_answer.hpp"
#include "protocol/webrtc/stun.hpp"
#include "server/access/gate.hpp"
#include "server/ingest/publish_claim.hpp"
#include "server/ingest/publish_services.hpp"
#include "server/io/flush_scheduler.hpp"
#include "server/io/player_output.hpp"
#include "server/webrtc/dtls_transport.hpp"
#include "server/webrtc/srtp_session.hpp"
#include "server/webrtc/udp_port.hpp"
#include "server/webrtc/whep_player.hpp"
#include "server/webrtc/whip_receiver.hpp"

namespace sluice::server {

class WebrtcService;

// What the offer and our answer settled for a session.
struct WebrtcPlan {
  protocol::webrtc::WebrtcRole role = protocol::webrtc::WebrtcRole::Whep;
  std::string key;  // "app/stream"
  std::string local_ufrag, local_pwd, remote_ufrag;
  std::string remote_fingerprint;  // the offer's a=fingerprint:sha-256
  WhepPlayer::Track video, audio;  // WHEP: what we send; WHIP: the payload types we take (0: none)
  AccessOutcome access;            // the admission (seat, push targets, the gate's name)
  HookEvent event;                 // who asked, for the done hooks
};

class WebrtcSession final : public Flushable, public PlayerOutput, public PublisherHost {
 public:
  enum class State : uint8_t { WaitingIce, Handshaking, Connected, Closed };

  WebrtcSession(WebrtcService& service, std::string id, WebrtcPlan plan, uint64_t now_ms);
  ~WebrtcSession();
  WebrtcSession(const WebrtcSession&) = delete;
  WebrtcSession& operator=(const WebrtcSession&) = delete;

  const std::string& session_id() const { return id_; }
  const std::string& key() const { return plan_.key; }
  const std::string& local_ufrag() const { return plan_.local_ufrag; }
  protocol::webrtc::WebrtcRole role() const { return plan_.role; }
  State state() const { return state_; }
  uint64_t created_ms() const { return created_ms_; }
  uint64_t last_heard_ms() const { return last_heard_ms_; }
  bool has_peer() const { return has_peer_; }
  const UdpPeer& udp_peer() const { return peer_; }

  // A STUN message sent to our ufrag (parsed by the service).
  void on_stun(const protocol::webrtc::StunMessage& message, const UdpPeer& from, uint64_t now_ms);
  // A DTLS, RTP or RTCP datagram from the session's peer address.
  void on_datagram(std::span<const uint8_t> datagram, uint64_t now_ms);
  // The service's timer: DTLS retransmissions.
  void on_tick(uint64_t now_ms);
  // Ends everything now and asks the service to delete the session later.
  void close(const std::string& reason) override;
  // The service's removal, already out of its tables: ends everything, no call back.
  void end(const std::string& reason);

  // SessionPeer and PlayerOutput.
  uint64_t id() const override { return number_; }
  const std::string& peer() const override { return peer_text_; }
  uint64_t bytes_in() const override { return bytes_in_; }
  uint64_t bytes_out() const override { return bytes_out_; }
  bool closing_soon() const override { return state_ == State::Closed || !pending_close_reason.empty(); }
  size_t write_queue_bytes() const override { return 0; }  // datagrams leave at once or are dropped
  void schedule_close(std::string reason) override;
  void request_flush() override;
  void request_held_flush() override;
  // Flushable: the player's queued frames go out.
  void flush() override;

  // PublisherHost (WHIP).
  const SessionPeer& publishing_peer() const override { return *this; }
  PublishServices& publish_services() override;
  HookEvent hook_base_event(const std::string& stream) const override;
  void end_replaced_publisher(uint32_t stream_id, const std::string& why, bool same_connection) override;
  void request_keyframe() override;

 private:
  void on_dtls(std::span<const uint8_t> datagram);
  void connected();
  void on_rtcp(std::span<const uint8_t> datagram, uint64_t now_ms);
  void on_rtp(std::span<const uint8_t> datagram, uint64_t now_ms);
  void play(const config::AppConfig& app);
  void publish(const config::AppConfig& app, const PublishClaim& claim);
  void ask_keyframe(uint64_t now_ms, const char* why);
  void send_sender_reports(uint64_t now_ms);
  void send_publisher_feedback(uint64_t now_ms);
  void send(std::span<const uint8_t> datagram);
  void send_all(DtlsTransport::Datagrams& datagrams);
  void send_rtp(std::vector<uint8_t>& packet);

  WebrtcService& service_;
  std::string id_;
  WebrtcPlan plan_;
  uint64_t number_;
  uint64_t created_ms_;
  uint64_t last_heard_ms_;
  State state_ = State::WaitingIce;
  bool has_peer_ = false;
  UdpPeer peer_;
  std::string peer_text_;
  std::unique_ptr<DtlsTransport> dtls_;
  std::unique_ptr<SrtpSession> srtp_;
  std::unique_ptr<WhepPlayer> player_;
  std::unique_ptr<LivePublisher> publisher_;
  std::unique_ptr<WhipReceiver> receiver_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);  // for a claim that answers later
  uint64_t last_pli_ms_ = 0;
  bool pli_due_ = false;  // a request came inside the PLI interval: a PLI goes when it ends
  uint64_t last_sr_ms_ = 0;
  uint64_t last_rr_ms_ = 0;
  uint64_t nacks_ = 0;                     // sequence numbers a player asked for again
  uint64_t keyframe_requests_ = 0;         // PLIs and FIRs a player sent (RTCP packets with one)
  uint64_t last_keyframe_request_ms_ = 0;  // when one of them last went on to the publisher
  uint64_t nacks_sent_ = 0;                // sequence numbers we asked a publisher for again
  std::vector<uint8_t> feedback_;
  std::vector<uint16_t> nack_list_;
  uint64_t bytes_in_ = 0, bytes_out_ = 0;
  uint64_t srtp_errors_ = 0;
};

}  // namespace sluice::server
