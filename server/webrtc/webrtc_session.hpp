// WebrtcSession: one WHIP publisher or WHEP player on its worker loop (docs/webrtc.md). Made by the
// loop's WebrtcService from an offer the HTTP side admitted; it answers, then lives on the loop's
// UDP port:
//   1. ICE-lite: Binding requests with our ufrag are answered (protocol/webrtc/ice_lite.hpp); the
//      first authenticated one fixes the peer's address (a later nominated one may move it).
//   2. DTLS, passive (our answer says a=setup:passive), from that address: the peer's certificate
//      must have the offer's fingerprint (server/webrtc/dtls_transport.hpp); then SRTP keys.
//   3. Media: a WHEP player's frames go out as SRTP (server/webrtc/whep_player.hpp); RTCP from the
//      peer keeps it alive. (A WHIP publisher's media is not taken yet.)
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
#include "server/io/flush_scheduler.hpp"
#include "server/io/player_output.hpp"
#include "server/webrtc/dtls_transport.hpp"
#include "server/webrtc/srtp_session.hpp"
#include "server/webrtc/udp_port.hpp"
#include "server/webrtc/whep_player.hpp"

namespace sluice::server {

class WebrtcService;

// What the offer and our answer settled for a session.
struct WebrtcPlan {
  protocol::webrtc::WebrtcRole role = protocol::webrtc::WebrtcRole::Whep;
  std::string key;  // "app/stream"
  std::string local_ufrag, local_pwd, remote_ufrag;
  std::string remote_fingerprint;  // the offer's a=fingerprint:sha-256
  WhepPlayer::Track video, audio;  // WHEP: what we send (payload type 0: not accepted)
};

class WebrtcSession final : public Flushable, public PlayerOutput {
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

 private:
  void on_dtls(std::span<const uint8_t> datagram);
  void connected();
  void on_rtcp(std::span<const uint8_t> datagram);
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
  uint64_t bytes_in_ = 0, bytes_out_ = 0;
  uint64_t srtp_errors_ = 0;
};

}  // namespace sluice::server
