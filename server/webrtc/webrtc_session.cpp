#include "server/webrtc/webrtc_session.hpp"

#include "protocol/webrtc/ice_lite.hpp"
#include "server/io/logging.hpp"
#include "server/webrtc/webrtc_service.hpp"

namespace sluice::server {

namespace pw = protocol::webrtc;

WebrtcSession::WebrtcSession(WebrtcService& service, std::string id, pw::WebrtcRole role, std::string key,
                             std::string local_ufrag, std::string local_pwd, std::string remote_ufrag, uint64_t now_ms)
    : service_(service),
      id_(std::move(id)),
      role_(role),
      key_(std::move(key)),
      local_ufrag_(std::move(local_ufrag)),
      local_pwd_(std::move(local_pwd)),
      remote_ufrag_(std::move(remote_ufrag)),
      created_ms_(now_ms),
      last_heard_ms_(now_ms) {
  SLUICE_LOG_INFO("webrtc={} event=webrtc_offer role={} stream={}", id_,
                  role_ == pw::WebrtcRole::Whip ? "whip" : "whep", key_);
}

WebrtcSession::~WebrtcSession() = default;

void WebrtcSession::on_stun(const pw::StunMessage& message, const UdpPeer& from, uint64_t now_ms) {
  if (state_ == State::Closed) return;
  pw::BindingOutcome outcome =
      pw::answer_binding_request(message, pw::IceCredentials{local_ufrag_, local_pwd_, remote_ufrag_}, from.endpoint);
  if (outcome.action == pw::BindingOutcome::Action::Ignore) return;
  service_.port().send(outcome.response, from);
  if (!outcome.authenticated) {
    SLUICE_LOG_DEBUG("webrtc={} event=stun_refused peer={} reason=\"{}\"", id_, from.endpoint.to_string(),
                     outcome.reason);
    return;
  }
  last_heard_ms_ = now_ms;
  // The first checked address becomes the peer; a nominated one later takes over (the browser
  // chose it), so DTLS and media follow the pair ICE settled on.
  const bool moves = has_peer_ && outcome.nominated && !(peer_.endpoint == from.endpoint);
  if (has_peer_ && !moves) return;
  const UdpPeer old = peer_;
  const bool had = has_peer_;
  peer_ = from;
  has_peer_ = true;
  if (state_ == State::WaitingIce) state_ = State::Handshaking;
  service_.peer_chosen(*this, old, had);
  SLUICE_LOG_INFO("webrtc={} event=ice_connected peer={} nominated={}", id_, from.endpoint.to_string(),
                  outcome.nominated ? "yes" : "no");
}

void WebrtcSession::on_datagram(std::span<const uint8_t> datagram, uint64_t now_ms) {
  if (state_ == State::Closed) return;
  last_heard_ms_ = now_ms;
  (void)datagram;  // DTLS, then SRTP: server/webrtc/dtls_transport.hpp and srtp_session.hpp
}

void WebrtcSession::send(std::span<const uint8_t> datagram) {
  if (has_peer_) service_.port().send(datagram, peer_);
}

void WebrtcSession::close(const std::string& reason) {
  if (state_ == State::Closed) return;
  state_ = State::Closed;
  SLUICE_LOG_INFO("webrtc={} event=webrtc_close stream={} reason=\"{}\"", id_, key_, reason);
}

}  // namespace sluice::server
