// WebrtcService: the WebRTC side of one worker loop (docs/webrtc.md, "How it runs"). Every loop
// with webrtc.listen set has one UDP port (listen's port + the loop's index: a session's answer
// names its loop's port, so its media reach the loop that holds it, with no hand-over between
// threads) and the sessions the HTTP side opened on this loop (WHIP and WHEP offers arrive on
// whichever loop accepted the HTTP connection).
//
// Closed sessions are deleted on a later loop turn (a close may come from inside any callback).
//
// Datagrams are sorted by their first byte (protocol/webrtc/datagram_kind.hpp): STUN goes to the
// session of the request's ufrag, whatever its source (ICE may try several addresses); DTLS, RTP
// and RTCP only to the session whose peer address an authenticated Binding request fixed;
// anything else is dropped and counted.
#pragma once

#include <uv.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/result.hpp"
#include "config/config.hpp"
#include "protocol/webrtc/sdp_answer.hpp"
#include "server/access/gate.hpp"
#include "server/ingest/publish_services.hpp"
#include "server/webrtc/udp_port.hpp"
#include "server/webrtc/webrtc_certificate.hpp"
#include "server/webrtc/shared_media.hpp"
#include "server/webrtc/webrtc_session.hpp"

namespace sluice::server {

class WebrtcService {
 public:
  WebrtcService(PublishServices& services, uint32_t worker);
  ~WebrtcService();
  WebrtcService(const WebrtcService&) = delete;
  WebrtcService& operator=(const WebrtcService&) = delete;

  // Binds this loop's port; `bound` gets "webrtc udp ADDRESS:PORT".
  Result<void> start(std::vector<std::string>& bound);

  struct Offer {
    protocol::webrtc::WebrtcRole role = protocol::webrtc::WebrtcRole::Whep;
    const config::AppConfig* app = nullptr;
    std::string name;
    std::string sdp;
    AccessOutcome access;  // the gate's admission: its seat and push targets go with the session
    HookEvent event;       // who asked, for the done hooks
  };
  struct Answer {
    std::string session_id;  // the resource: /APP/STREAM/whep/ID
    std::string sdp;
  };
  // Errc::Malformed: the offer is no SDP we read; Errc::Unsupported: nothing in it we can take;
  // Errc::LimitExceeded: webrtc.max_sessions.
  Result<Answer> open(Offer&& offer);
  // DELETE on the resource. A session id starts with its loop's index: a session of another loop
  // is ended there, through `forward` (set by the composition root), and counts as found.
  enum class End : uint8_t { Ended, Forwarded, Unknown };
  End end(const std::string& session_id, const std::string& why);
  void forward_ends_to(std::function<void(uint32_t worker, const std::string& session_id)> forward) {
    forward_end_ = std::move(forward);
  }
  void close_all(const std::string& why);
  void stop();

  PublishServices& services() { return services_; }
  const std::shared_ptr<const WebrtcCertificate>& certificate_ptr() const { return certificate_; }
  // What the WHEP players of stream `key` on this loop share: its Opus and RTP payloads.
  std::shared_ptr<SharedMedia> shared_media(const std::string& key);
  // A session closes itself: out of the tables now, deleted on a later loop turn.
  void close_later(WebrtcSession& session, const std::string& why);
  UdpPort& port() { return port_; }
  size_t session_count() const { return sessions_.size(); }
  static size_t total_sessions() { return total_sessions_.load(std::memory_order_relaxed); }

  // A session fixed (or moved) its peer address.
  void peer_chosen(WebrtcSession& session, const UdpPeer& old_peer, bool had_peer);

  struct Counters {
    uint64_t stun_bad = 0;        // not STUN we can parse
    uint64_t stun_unknown = 0;    // a ufrag no session has
    uint64_t unknown_source = 0;  // DTLS/RTP/RTCP from an address no session has
    uint64_t other = 0;           // neither STUN, DTLS, RTP nor RTCP
  };
  const Counters& counters() const { return counters_; }

 private:
  void on_datagram(std::span<const uint8_t> datagram, const UdpPeer& from);
  void remove(WebrtcSession& session, const std::string& why);
  void reap();
  static void on_tick(uv_timer_t* t);
  void tick();

  PublishServices& services_;
  uint32_t worker_;
  std::function<void(uint32_t, const std::string&)> forward_end_;
  UdpPort port_;
  uint16_t port_number_ = 0;
  std::vector<protocol::IpAddress> candidates_;  // what answers advertise
  // One certificate for the process (its fingerprint is in every answer), made at the first start.
  std::shared_ptr<const WebrtcCertificate> certificate_;
  uv_timer_t tick_{};
  bool started_ = false;
  std::unordered_map<std::string, std::unique_ptr<WebrtcSession>> sessions_;  // by id
  std::vector<std::unique_ptr<WebrtcSession>> closed_;                        // deleted at the next tick
  std::unordered_map<std::string, WebrtcSession*> by_ufrag_;
  std::unordered_map<std::string, std::weak_ptr<SharedMedia>> shared_;  // by stream key
  std::unordered_map<std::string, WebrtcSession*> by_peer_;             // UdpPeer::key()
  Counters counters_;
  static std::atomic<size_t> total_sessions_;
};

}  // namespace sluice::server
