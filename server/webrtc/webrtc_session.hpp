// WebrtcSession: one WHIP publisher or WHEP player on its worker loop (docs/webrtc.md). Made by the
// loop's WebrtcService from an offer the HTTP side admitted; it answers, then lives on the loop's
// UDP port:
//   1. ICE-lite: Binding requests with our ufrag are answered (protocol/webrtc/ice_lite.hpp); the
//      first authenticated one fixes the peer's address (a later nominated one may move it).
//   2. DTLS (passive: our answer says a=setup:passive) from that address, then SRTP keys.
//   3. Media: a WHEP player's frames go out as SRTP; a WHIP publisher's come in.
// Until 2 completes within webrtc.session_timeout, or when the peer falls silent that long, the
// service closes the session.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "protocol/webrtc/sdp_answer.hpp"
#include "protocol/webrtc/sdp_description.hpp"
#include "protocol/webrtc/stun.hpp"
#include "server/webrtc/udp_port.hpp"

namespace sluice::server {

class WebrtcService;

class WebrtcSession {
 public:
  enum class State : uint8_t { WaitingIce, Handshaking, Connected, Closed };

  WebrtcSession(WebrtcService& service, std::string id, protocol::webrtc::WebrtcRole role, std::string key,
                std::string local_ufrag, std::string local_pwd, std::string remote_ufrag, uint64_t now_ms);
  ~WebrtcSession();
  WebrtcSession(const WebrtcSession&) = delete;
  WebrtcSession& operator=(const WebrtcSession&) = delete;

  const std::string& id() const { return id_; }
  const std::string& key() const { return key_; }  // "app/stream"
  const std::string& local_ufrag() const { return local_ufrag_; }
  protocol::webrtc::WebrtcRole role() const { return role_; }
  State state() const { return state_; }
  uint64_t created_ms() const { return created_ms_; }
  uint64_t last_heard_ms() const { return last_heard_ms_; }
  bool has_peer() const { return has_peer_; }
  const UdpPeer& peer() const { return peer_; }

  // A STUN message sent to our ufrag (parsed by the service).
  void on_stun(const protocol::webrtc::StunMessage& message, const UdpPeer& from, uint64_t now_ms);
  // A DTLS, RTP or RTCP datagram from the session's peer address.
  void on_datagram(std::span<const uint8_t> datagram, uint64_t now_ms);
  void close(const std::string& reason);

 private:
  void send(std::span<const uint8_t> datagram);

  WebrtcService& service_;
  std::string id_;
  protocol::webrtc::WebrtcRole role_;
  std::string key_;
  std::string local_ufrag_, local_pwd_, remote_ufrag_;
  uint64_t created_ms_;
  uint64_t last_heard_ms_;
  State state_ = State::WaitingIce;
  bool has_peer_ = false;
  UdpPeer peer_;
};

}  // namespace sluice::server
